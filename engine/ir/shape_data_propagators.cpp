#include "engine/ir/shape_data_propagators.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/ir/onnx_import.h"

namespace tilebank::engine::model {
namespace {

// Input `k`'s propagated values when every one is known and the input is an integer tensor.
std::optional<std::vector<int64_t>> KnownInts(onnx::DataPropagationContext& ctx, size_t k) {
  const onnx::TypeProto* type = ctx.getInputType(k);
  if (!type || !type->has_tensor_type()) return std::nullopt;
  const int elem = type->tensor_type().elem_type();
  if (elem != onnx::TensorProto::INT64 && elem != onnx::TensorProto::INT32) return std::nullopt;
  const onnx::TensorShapeProto* data = ctx.getInputData(k);
  if (!data) return std::nullopt;
  std::vector<int64_t> values;
  for (const auto& d : data->dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    values.push_back(d.dim_value());
  }
  return values;
}

void Emit(onnx::DataPropagationContext& ctx, const std::vector<int64_t>& values) {
  onnx::TensorShapeProto out;
  for (int64_t v : values) out.add_dim()->set_dim_value(v);
  ctx.addOutputData(0, std::move(out));
}

// An elementwise op over its inputs' values, one of them broadcast when it holds one value; `op`
// returns nullopt where the value is not one a shape holds (a negative operand, a zero divisor).
onnx::DataPropagationFunction Elementwise(std::function<std::optional<int64_t>(int64_t, int64_t)> op) {
  return [op](onnx::DataPropagationContext& ctx) {
    if (ctx.getNumInputs() < 1 || ctx.getNumOutputs() != 1) return;
    auto acc = KnownInts(ctx, 0);
    if (!acc) return;
    for (size_t k = 1; k < ctx.getNumInputs(); ++k) {
      auto next = KnownInts(ctx, k);
      if (!next) return;
      const size_t n = std::max(acc->size(), next->size());
      if ((acc->size() != n && acc->size() != 1) || (next->size() != n && next->size() != 1)) return;
      std::vector<int64_t> result(n);
      for (size_t i = 0; i < n; ++i) {
        auto v = op((*acc)[acc->size() == 1 ? 0 : i], (*next)[next->size() == 1 ? 0 : i]);
        if (!v) return;
        result[i] = *v;
      }
      acc = std::move(result);
    }
    Emit(ctx, *acc);
  };
}

void Register(const char* op_type, onnx::DataPropagationFunction propagate) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, kExecutorOpset, "");
  // The registry owns its schemas as mutable objects; it hands them out const.
  if (schema) const_cast<onnx::OpSchema*>(schema)->PartialDataPropagationFunction(std::move(propagate));
}

}  // namespace

void RegisterShapeDataPropagators() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Non-negative operands and a positive divisor only: there integer division and modulo agree
    // in every convention (C's truncation, Python's floor, ONNX's Mod with fmod 0).
    Register("Div", Elementwise([](int64_t a, int64_t b) -> std::optional<int64_t> {
               if (a < 0 || b <= 0) return std::nullopt;
               return a / b;
             }));
    Register("Mod", Elementwise([](int64_t a, int64_t b) -> std::optional<int64_t> {
               if (a < 0 || b <= 0) return std::nullopt;
               return a % b;
             }));
    Register("Max", Elementwise([](int64_t a, int64_t b) -> std::optional<int64_t> { return std::max(a, b); }));
    Register("Min", Elementwise([](int64_t a, int64_t b) -> std::optional<int64_t> { return std::min(a, b); }));
    Register("Identity", Elementwise([](int64_t a, int64_t) -> std::optional<int64_t> { return a; }));
  });
}

}  // namespace tilebank::engine::model
