#include "engine/builder/builder.h"

#include <xxhash.h>

#include <chrono>

#include "engine/target/host_facts.h"

namespace tilebank::engine {

uint64_t CompileKey(const std::string& template_id, uint32_t template_version, const std::string& descriptor,
                    const std::string& policy_text, const std::string& target) {
  std::string text = template_id + '\n' + std::to_string(template_version) + '\n' + descriptor + '\n' + policy_text + '\n' + target;
  return XXH3_64bits(text.data(), text.size());
}

Result<std::shared_ptr<const HalideProgram>> Builder::Compile(uint64_t key, const std::function<HalideProgram()>& define) {
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
    program->pipeline.compile_jit(Host().target);
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

BuilderStats Builder::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

Builder& SharedBuilder() {
  static Builder builder;
  return builder;
}

}  // namespace tilebank::engine
