// The builder: policy -> Halide pipeline -> compiled code, with a compile cache keyed by xxh3 of
// (template id, template version, op descriptor, policy, target). A policy measured again
// (another mode seeded with it, a bench run, a reload) is not compiled again. Tuning candidates are
// JIT-compiled in memory; inside a KernelDiskCacheScope (the model executor) programs are compiled
// ahead of time into the disk cache instead, so the next process loads them without compiling, and
// those with a run description (prebuilt_kernel.h) without defining their pipeline at all.
#pragma once
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/backends/halide/halide_program.h"
#include "base/status.h"

namespace tilebank::engine {

uint64_t CompileKey(const std::string& template_id, uint32_t template_version, const std::string& descriptor,
                    const std::string& policy_text, const std::string& target);

class KernelDiskCache;

struct BuilderStats {
  size_t hits = 0;
  size_t compiles = 0;
  size_t failures = 0;
  size_t prebuilt = 0;  // kernels run from the disk cache without Halide
  double compile_seconds = 0;
};

class Builder {
 public:
  explicit Builder(size_t capacity = 512) : capacity_(capacity) {}
  // The compiled program for `key`; on a miss runs `define` and JIT-compiles its pipeline.
  // A Halide error while defining or compiling comes back as a non-ok status (a failed candidate).
  Result<std::shared_ptr<const HalideProgram>> Compile(uint64_t key, const std::function<HalideProgram()>& define);
  // The kernel of `key` from the disk cache in scope, run without Halide; nullptr when no cache is
  // in scope or it holds no run description for `key` (then Compile).
  std::unique_ptr<Kernel> Prebuilt(uint64_t key);
  BuilderStats stats() const;
  // The Halide target of the kernels Prebuilt gave, as text ("" before the first).
  std::string PrebuiltTarget() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<uint64_t> lru_;
  std::unordered_map<uint64_t, std::pair<std::shared_ptr<const HalideProgram>, std::list<uint64_t>::iterator>> cache_;
  BuilderStats stats_;
  std::string prebuilt_target_;
};

// While alive, Compile calls on this thread go through `cache` (nullptr: in memory only). Nests.
class KernelDiskCacheScope {
 public:
  explicit KernelDiskCacheScope(KernelDiskCache* cache);
  ~KernelDiskCacheScope();
  KernelDiskCacheScope(const KernelDiskCacheScope&) = delete;
  KernelDiskCacheScope& operator=(const KernelDiskCacheScope&) = delete;

 private:
  KernelDiskCache* previous_;
};

// The process-wide builder the templates use.
Builder& SharedBuilder();

}  // namespace tilebank::engine
