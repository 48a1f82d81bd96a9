// What the oneDNN kernels share: one CPU engine for the process, copies between our row-major
// tensors and oneDNN memory, and one synchronous primitive call.
#pragma once

#include <dnnl.hpp>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/conv_problem.h"
#include "engine/core/kernel.h"
#include "engine/core/tensor.h"
#include "base/status.h"

namespace tilebank::engine {

dnnl::engine& OneDnnCpuEngine();
// The running oneDNN's version, commit (Debian's: "N/A") and the instruction set it runs at
// (ONEDNN_MAX_CPU_ISA may lower it): part of the key of anything remembered about what it offers,
// which another release or ISA may offer otherwise.
const std::string& OneDnnVersionText();
// A dense row-major f32 descriptor of `shape` (a scalar is one element).
dnnl::memory::desc RowMajorDesc(const std::vector<int64_t>& shape);
// New memory of `md` holding a copy of `t` (same element count and order).
dnnl::memory MemoryFromTensor(const Tensor& t, const dnnl::memory::desc& md);
// A row-major tensor of `shape` copied from memory in a plain layout.
Tensor TensorFromMemory(const dnnl::memory& m, const std::vector<int64_t>& shape);
// `md` as a layout the model executor hands over (key: its dims, padding, strides and blocks, then
// kHandoverTypeMark and the element type where that is not float32); an empty key when `md` is dense
// row-major float32.
HandoverLayout HandoverLayoutOf(const dnnl::memory::desc& md);
inline constexpr const char* kHandoverTypeMark = ":dt";
// A kernel's identity (Kernel::Identity) on a oneDNN primitive: `what` it is, the implementation
// oneDNN picked, the layouts of `mds` (the caller's and the primitive's) and `steps` fused into it.
std::string OneDnnIdentity(const std::string& what, const std::string& impl, const std::vector<dnnl::memory::desc>& mds,
                           const std::vector<std::string>& steps);
// The descriptor a layout HandoverLayoutOf made stands for, over `shape` (row-major when the
// key is empty); nullopt for a key it did not make or of another shape.
std::optional<dnnl::memory::desc> DescOfHandover(const HandoverLayout& layout, const std::vector<int64_t>& shape);
// Runs `body` (returning a Status or a Result); a oneDNN exception becomes kInvalidInput "oneDNN: ...".
template <typename Body>
auto CatchOneDnnErrors(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const dnnl::error& e) {
    return Status::InvalidInput(std::string("oneDNN: ") + e.what());
  }
}
// oneDNN's binary algorithm for Add, Sub, Mul or Div (std::out_of_range for another op type).
dnnl::algorithm OneDnnBinaryAlgorithm(const std::string& op_type);
// Whether `pd` is one of oneDNN's reference implementations ("ref:any", ...).
bool IsReferenceImplementation(const dnnl::primitive_desc_base& pd);
// Refused (a message naming it) where oneDNN offers only one of its reference implementations:
// the kernels that ask have a reference of their own that is as good.
Status RefuseReference(const dnnl::primitive_desc_base& pd);

// Runs `prim` on `args` and waits for it.
void ExecuteAndWait(const dnnl::primitive& prim, dnnl::stream& stream, const std::unordered_map<int, dnnl::memory>& args);

// A convolution's weight dims as oneDNN takes them: OIHW, or GOIHW when grouped.
dnnl::memory::dims ConvWeightDims(const ConvProblem& p);
// The inference convolution of `p` with `algo` ("direct", "winograd"), activations in `layout`
// ("plain": NCHW, "nhwc", else oneDNN's preferred one), weights in its preferred layout; `bf16`:
// source and weights in bfloat16 (bias stays float32, the destination too unless `dst` describes it).
dnnl::convolution_forward::desc ConvDesc(const ConvProblem& p, const std::string& algo, const std::string& layout, bool bf16 = false,
                                         const dnnl::memory::desc* dst = nullptr);
// `md` with float32 (bfloat16) elements: the same dimensions and layout.
dnnl::memory::desc WithF32(const dnnl::memory::desc& md);
dnnl::memory::desc WithBf16(const dnnl::memory::desc& md);
// Whether an implementation oneDNN names computes bfloat16 natively (its ISA has bf16 dot products
// or AMX), not by converting to float32 or in a reference loop.
bool NativeBf16Implementation(const std::string& impl_name);

}  // namespace tilebank::engine
