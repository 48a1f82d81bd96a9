// The "typed" line of an op's kernel table: a function over the tensors' own element types (no
// dtype switch per element, as the reference has), computing what the reference computes, that may
// decline an instance (returns false) and leave it to the reference kernel.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {

// Fills the outputs and returns true, or returns false (inputs it does not take, an index out of
// range the reference reports) having written nothing the caller reads.
using TypedFn = std::function<bool(const KernelInputs& in, std::vector<TypedTensor>* out)>;

// A kernel that runs `typed` and, where it returns false or an input is a string or not a tensor,
// the op's reference kernel.
class TypedKernel : public OpKernel {
 public:
  TypedKernel(TypedFn typed, std::unique_ptr<OpKernel> reference) : typed_(std::move(typed)), reference_(std::move(reference)) {}
  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    for (const TypedTensor* t : in)
      if (t && (t->dtype == DType::kString || !t->IsTensor())) return reference_->Compute(in, out);
    return typed_(in, out) ? Status::Ok() : reference_->Compute(in, out);
  }

 private:
  TypedFn typed_;
  std::unique_ptr<OpKernel> reference_;
};

// The factory of a typed kernel: `make` for the typed function, the table's reference beside it.
inline KernelFactory Typed(std::function<Result<TypedFn>(const KernelInfo&)> make) {
  return [make](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    auto reference = KernelRegistry::Default().Create(info, std::string(KernelDef::kReferenceImplementation));
    if (!reference.ok()) return reference.status();
    auto typed = make(info);
    if (!typed.ok()) return typed.status();
    return std::unique_ptr<OpKernel>(new TypedKernel(std::move(typed.value()), std::move(reference.value())));
  };
}

// Calls fn with a value of the C++ type of `dtype` among those the typed reductions and comparisons
// take; false for another dtype.
template <class Fn>
bool VisitReducible(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn(float{}); return true;
    case DType::kFloat64: fn(double{}); return true;
    case DType::kInt64: fn(int64_t{}); return true;
    case DType::kInt32: fn(int32_t{}); return true;
    default: return false;
  }
}

}  // namespace tilebank::engine::kernels
