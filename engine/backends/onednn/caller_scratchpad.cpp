#include "engine/backends/onednn/caller_scratchpad.h"

#include <cstdlib>
#include <memory>
#include <new>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {
namespace {

// The calling thread's buffer of at least `bytes` (64-byte aligned); it moves when it grows.
void* ThreadBuffer(size_t bytes) {
  struct Buffer {
    std::unique_ptr<void, decltype(&std::free)> data{nullptr, &std::free};
    size_t bytes = 0;
  };
  thread_local Buffer buffer;
  if (bytes > buffer.bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffer.data.reset(std::aligned_alloc(64, rounded));
    if (!buffer.data) throw std::bad_alloc();
    buffer.bytes = rounded;
  }
  return buffer.data.get();
}

}  // namespace

void UseCallerScratchpad(dnnl::primitive_attr* attr) { attr->set_scratchpad_mode(dnnl::scratchpad_mode::user); }

void CallerScratchpad::Describe(const dnnl::memory::desc& md) {
  md_ = md;
  bytes_ = md.get_size();
  memory_ = dnnl::memory();
}

void CallerScratchpad::AddTo(std::unordered_map<int, dnnl::memory>* args) {
  if (bytes_ == 0) return;
  void* data = ThreadBuffer(bytes_);
  if (!memory_)
    memory_ = dnnl::memory(md_, OneDnnCpuEngine(), data);
  else if (memory_.get_data_handle() != data)
    memory_.set_data_handle(data);
  (*args)[DNNL_ARG_SCRATCHPAD] = memory_;
}

CallerReorder::CallerReorder(const dnnl::memory& from, const dnnl::memory& to) {
  dnnl::primitive_attr attr;
  UseCallerScratchpad(&attr);
  const dnnl::reorder::primitive_desc pd(from, to, attr);
  reorder_ = dnnl::reorder(pd);
  scratchpad_.Describe(pd.scratchpad_desc());
}

void CallerReorder::Run(dnnl::stream& stream, const dnnl::memory& from, const dnnl::memory& to) {
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  scratchpad_.AddTo(&args);
  reorder_.execute(stream, args);
}

}  // namespace tilebank::engine
