// Scratchpads the caller gives oneDNN, for primitives that one thread makes and another runs.
//
// oneDNN 2.6 keeps its own ("library") scratchpad per thread, and a primitive takes it from the
// thread that made it but reads the buffer of the thread that runs it: a primitive made on the
// executor's second bind thread (engine/runtime/kernel_prefetch.h) and run on the first read a
// buffer of another size, or none. The kernels a model binds ahead therefore make their primitives
// with scratchpad_mode::user (UseCallerScratchpad) and hand each run the running thread's buffer:
// one per thread, shared by every such primitive run there and grown to the largest, as oneDNN's
// own is, so memory does not grow with the number of steps.
#pragma once
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace tilebank::engine {

// Sets `attr` so that the primitive made with it asks its caller for its scratchpad.
void UseCallerScratchpad(dnnl::primitive_attr* attr);

// The scratchpad argument of one primitive made with UseCallerScratchpad.
class CallerScratchpad {
 public:
  // The primitive's pd.scratchpad_desc() (empty: it needs none).
  void Describe(const dnnl::memory::desc& md);
  // Adds DNNL_ARG_SCRATCHPAD, the calling thread's buffer, when the primitive needs one.
  void AddTo(std::unordered_map<int, dnnl::memory>* args);

 private:
  dnnl::memory::desc md_;
  size_t bytes_ = 0;
  dnnl::memory memory_;  // over the buffer of the thread that ran it last
};

// A reorder made with UseCallerScratchpad, run with its scratchpad.
class CallerReorder {
 public:
  CallerReorder() = default;
  CallerReorder(const dnnl::memory& from, const dnnl::memory& to);
  explicit operator bool() const { return static_cast<bool>(reorder_); }
  void Run(dnnl::stream& stream, const dnnl::memory& from, const dnnl::memory& to);

 private:
  dnnl::reorder reorder_;
  CallerScratchpad scratchpad_;
};

}  // namespace tilebank::engine
