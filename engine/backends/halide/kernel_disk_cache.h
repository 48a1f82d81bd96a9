// Compiled Halide kernels kept on disk across processes, so a model's second load does not compile
// again. Each program is compiled ahead of time (Halide's compile_to_object, without a runtime),
// linked by the system C compiler into `<root>/<build id>/<compile key>.so` and loaded with dlopen;
// all of them share one standalone Halide runtime (`halide_runtime_<target hash>.so` beside them).
// The executable's GNU build ID names the folder: a rebuilt tilebank never loads a kernel compiled
// by another build, whose template code (and so its arguments) may differ. Files are
// written under a temporary name and renamed, so concurrent processes and a kill leave only whole
// files. Nothing is ever evicted: removing the directory empties the cache.
//
// A kernel whose arguments need nothing of Halide's to be made (every input read in place, the
// output written in place) also gets a run description, `<compile key>.run` (the runtime it links
// and its arguments' extents): a later process runs it from the description alone, so a warm load
// of a model whose Halide kernels are all cached never opens libHalide (engine/backends/halide/
// prebuilt_kernel.h).
#pragma once
#include <Halide.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace tilebank::engine {

// An ahead-of-time compiled pipeline's entry point: `args` holds one halide_buffer_t* per argument,
// in the order the program was compiled with (its inputs, then its output). 0 on success.
using ArgvEntry = int (*)(void** args);

// A cached kernel's entry point and its run description, loaded without Halide.
struct PrebuiltEntry {
  ArgvEntry entry = nullptr;
  std::string target;  // the Halide target it was compiled for, as text
  std::string description;
};

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
  // Writes `key`'s run description (its kernel stored first, by Load), naming the runtime it links.
  Status SaveRunDescription(uint64_t key, const std::string& description);
  // `key`'s kernel and run description when both are on disk, its runtime loaded; nullopt otherwise
  // (the caller then defines the pipeline and calls Load). Read from disk once per key.
  std::optional<PrebuiltEntry> LoadPrebuilt(uint64_t key);
  KernelDiskCacheStats stats() const;
  const std::string& dir() const { return dir_; }  // <root>/<build id>

 private:
  Status LoadRuntime(const Halide::Target& target);
  // dlopen of a runtime under dir_, once per file; call with mutex_ held.
  Status OpenRuntime(const std::string& file);

  std::string dir_;
  mutable std::mutex mutex_;
  std::set<std::string> runtimes_open_;  // file names under dir_
  std::string runtime_file_;             // the one LoadRuntime opened for this process's target
  std::string target_text_;              // and that target as text
  std::map<uint64_t, PrebuiltEntry> prebuilt_;  // LoadPrebuilt's finds
  KernelDiskCacheStats stats_;
};

// The directory `run` and the executor use: $TILEBANK_KERNEL_CACHE when set ("off" disables the
// cache: an empty string comes back), else $XDG_CACHE_HOME/tilebank/kernels, else
// ~/.cache/tilebank/kernels.
std::string DefaultKernelCacheDir();

// The process-wide disk cache for `dir` (one per directory, created on first use).
KernelDiskCache& KernelDiskCacheAt(const std::string& dir);

}  // namespace tilebank::engine
