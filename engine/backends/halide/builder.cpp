#include "engine/backends/halide/builder.h"

#include <xxhash.h>

#include <chrono>
#include <iostream>

#include "engine/backends/halide/halide_target.h"
#include "engine/backends/halide/openmp_par_for.h"
#include "engine/backends/halide/prebuilt_kernel.h"

namespace tilebank::engine {

namespace {

thread_local KernelDiskCache* t_disk_cache = nullptr;

// Compiles `program` into `disk`; false (after saying why, once per process) when it cannot be.
bool CompileThroughDisk(KernelDiskCache& disk, uint64_t key, HalideProgram& program) {
  std::vector<Halide::Argument> args(program.params.begin(), program.params.end());
  auto entry = disk.Load(key, program.pipeline, args, HostHalideTarget());
  if (entry.ok()) {
    program.entry = *entry;
    // A later process runs it without Halide when its arguments allow; without the description it
    // compiles the pipeline's definition again to load it, as before.
    if (const std::string description = RunDescriptionOf(program); !description.empty()) (void)disk.SaveRunDescription(key, description);
    return true;
  }
  if (entry.status().code() != StatusCode::kInvalidInput) {  // extern stages are expected; the rest is worth a word
    static std::once_flag said;
    std::call_once(said, [&] { std::cerr << "tilebank: compiled kernels are not cached on disk: " << entry.status().message() << "\n"; });
  }
  return false;
}

}  // namespace

KernelDiskCacheScope::KernelDiskCacheScope(KernelDiskCache* cache) : previous_(t_disk_cache) { t_disk_cache = cache; }
KernelDiskCacheScope::~KernelDiskCacheScope() { t_disk_cache = previous_; }

uint64_t CompileKey(const std::string& template_id, uint32_t template_version, const std::string& descriptor,
                    const std::string& policy_text, const std::string& target) {
  std::string text = template_id + '\n' + std::to_string(template_version) + '\n' + descriptor + '\n' + policy_text + '\n' + target;
  return XXH3_64bits(text.data(), text.size());
}

Result<std::shared_ptr<const HalideProgram>> Builder::Compile(uint64_t compile_key, const std::function<HalideProgram()>& define) {
  KernelDiskCache* disk = t_disk_cache;
  // A program compiled for the disk cache and one JIT-compiled in memory are separate entries.
  const uint64_t key = disk ? compile_key ^ 0x9e3779b97f4a7c15ull : compile_key;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      stats_.hits++;
      return it->second.first;
    }
  }
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<HalideProgram> program;
  try {
    program = std::make_shared<HalideProgram>(define());
    if (!disk || !CompileThroughDisk(*disk, compile_key, *program)) {
      program->pipeline.jit_handlers().custom_do_par_for = [](Halide::JITUserContext* context, int (*task)(Halide::JITUserContext*, int, uint8_t*),
                                                               int min, int size, uint8_t* closure) {
        return RunParallelTasks(min, size, [&](int i) { return task(context, i, closure); });
      };
      program->pipeline.compile_jit(HostHalideTarget());
    }
  } catch (const Halide::Error& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.failures++;
    return Status::InvalidInput(std::string("compile error: ") + e.what());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.compiles++;
  stats_.compile_seconds += seconds;
  lru_.push_front(key);
  cache_[key] = {program, lru_.begin()};
  while (cache_.size() > capacity_) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  return std::shared_ptr<const HalideProgram>(program);
}

std::unique_ptr<Kernel> Builder::Prebuilt(uint64_t key) {
  KernelDiskCache* disk = t_disk_cache;
  if (!disk) return nullptr;
  auto found = disk->LoadPrebuilt(key);
  if (!found) return nullptr;
  auto kernel = PrebuiltHalideKernel(found->entry, found->description);
  if (!kernel.ok()) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.prebuilt++;
  prebuilt_target_ = found->target;
  return std::move(kernel.value());
}

std::string Builder::PrebuiltTarget() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return prebuilt_target_;
}

BuilderStats Builder::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

Builder& SharedBuilder() {
  static Builder builder;
  return builder;
}

}  // namespace tilebank::engine
