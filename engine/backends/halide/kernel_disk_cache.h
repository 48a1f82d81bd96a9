// Compiled Halide kernels kept on disk across processes, so a model's second load does not compile
// again. Each program is compiled ahead of time (Halide's compile_to_object, without a runtime),
// linked by the system C compiler into `<root>/<build id>/<compile key>.so` and loaded with dlopen;
// all of them share one standalone Halide runtime (`halide_runtime_<target hash>.so` beside them).
// The executable's GNU build ID names the folder: a rebuilt tilebank never loads a kernel compiled
// by another build, whose template code (and so its arguments) may differ. Files are
// written under a temporary name and renamed, so concurrent processes and a kill leave only whole
// files. Nothing is ever evicted: removing the directory empties the cache.
#pragma once
#include <Halide.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace tilebank::engine {

// An ahead-of-time compiled pipeline's entry point: `args` holds one halide_buffer_t* per argument,
// in the order the program was compiled with (its inputs, then its output). 0 on success.
using ArgvEntry = int (*)(void** args);

struct KernelDiskCacheStats {
  size_t loaded = 0;    // found on disk
  size_t compiled = 0;  // compiled and stored by this process
};

class KernelDiskCache {
 public:
  // Kernels of this executable under `root`.
  explicit KernelDiskCache(std::string root);
  // The entry point of `key`'s kernel: loaded from disk, else compiled from `pipeline` with
  // `args` (inputs then output) for `target`, stored, and loaded. An error when it cannot be
  // (an unwritable directory, no C compiler, a pipeline with extern stages): the caller then
  // JIT-compiles, which is always possible.
  Result<ArgvEntry> Load(uint64_t key, Halide::Pipeline pipeline, const std::vector<Halide::Argument>& args, const Halide::Target& target);
  KernelDiskCacheStats stats() const;
  const std::string& dir() const { return dir_; }  // <root>/<build id>

 private:
  Status LoadRuntime(const Halide::Target& target);

  std::string dir_;
  mutable std::mutex mutex_;
  bool runtime_loaded_ = false;
  KernelDiskCacheStats stats_;
};

// The directory `run` and the executor use: $TILEBANK_KERNEL_CACHE when set ("off" disables the
// cache: an empty string comes back), else $XDG_CACHE_HOME/tilebank/kernels, else
// ~/.cache/tilebank/kernels.
std::string DefaultKernelCacheDir();

// The process-wide disk cache for `dir` (one per directory, created on first use).
KernelDiskCache& KernelDiskCacheAt(const std::string& dir);

}  // namespace tilebank::engine
