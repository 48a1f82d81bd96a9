// Choices a kernel times when it is bound (oneDNN's convolution: its blocked layouts against NCHW,
// the faster kept), remembered so that a model's next load times nothing: in the process, and on
// disk in the kernel cache's build folder (engine/backends/halide/kernel_disk_cache.h, `choices/`),
// one small file per choice written under a temporary name and renamed. The key names the instance
// and the host (soc_version, the threads the libraries run on); another build's folder, another
// build's choices. TILEBANK_KERNEL_CACHE=off keeps them in the process only.
#pragma once
#include <optional>
#include <string>

namespace tilebank::engine {

class RunQueueWatch;

// The choice remembered for `key` (with the host's soc_version and threads appended), if any.
std::optional<std::string> RecallMeasuredChoice(const std::string& key);
// Remembers `choice` for `key` (likewise extended); a cache that cannot be written keeps it in the
// process only, and so does a choice timed under `timed_under` while the machine was busy (its
// threads waited for the cores: engine/core/run_queue_watch.h), which the next load times again.
void RememberMeasuredChoice(const std::string& key, const std::string& choice, const RunQueueWatch* timed_under = nullptr);

}  // namespace tilebank::engine
