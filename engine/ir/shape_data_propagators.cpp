#include "engine/ir/shape_data_propagators.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/core/broadcast.h"
#include "engine/core/slice_walk.h"
#include "engine/core/tensor.h"
#include "engine/ir/onnx_import.h"

namespace tilebank::engine::model {
namespace {

// Propagated values as integers, when every one is known.
std::optional<std::vector<int64_t>> ValuesOf(const onnx::TensorShapeProto* data) {
  if (!data) return std::nullopt;
  std::vector<int64_t> values;
  for (const auto& d : data->dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    values.push_back(d.dim_value());
  }
  return values;
}

// Input `k`'s propagated values when every one is known and the input is an integer tensor.
std::optional<std::vector<int64_t>> KnownInts(onnx::DataPropagationContext& ctx, size_t k) {
  const onnx::TypeProto* type = ctx.getInputType(k);
  if (!type || !type->has_tensor_type()) return std::nullopt;
  const int elem = type->tensor_type().elem_type();
  if (elem != onnx::TensorProto::INT64 && elem != onnx::TensorProto::INT32) return std::nullopt;
  return ValuesOf(ctx.getInputData(k));
}

// Input `k`'s propagated values, of any type (a boolean condition's are 0 and 1).
std::optional<std::vector<int64_t>> KnownValues(onnx::DataPropagationContext& ctx, size_t k) {
  return ValuesOf(k < ctx.getNumInputs() ? ctx.getInputData(k) : nullptr);
}

// Whether no input is typed with more than one axis. Data of several axes (what Reshape and
// Transpose carry here) holds its values flat; the elementwise and Gather propagators index and
// broadcast it as a list, which is wrong for it (libonnx's Add fails the model over [2, 2] + [2]).
bool AtMostOneAxis(onnx::DataPropagationContext& ctx) {
  for (size_t k = 0; k < ctx.getNumInputs(); ++k) {
    const onnx::TypeProto* type = ctx.getInputType(k);
    if (type && type->has_tensor_type() && type->tensor_type().has_shape() && type->tensor_type().shape().dim_size() > 1) return false;
  }
  return true;
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
    if (ctx.getNumInputs() < 1 || ctx.getNumOutputs() != 1 || !AtMostOneAxis(ctx)) return;
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

// A tensor type's dimensions when every one is known.
std::optional<std::vector<int64_t>> StaticShape(const onnx::TypeProto* type) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
  return ValuesOf(&type->tensor_type().shape());
}

// The row-major positions, in a tensor of `strides`, of the elements an odometer over `counts`
// reaches from `base`, each axis advancing by its `step` (output order: row-major over `counts`).
std::vector<int64_t> WalkedPositions(const std::vector<int64_t>& counts, const std::vector<int64_t>& base, const std::vector<int64_t>& step,
                                     const std::vector<int64_t>& strides) {
  const size_t rank = counts.size();
  std::vector<int64_t> positions, index(rank, 0);
  const int64_t total = Tensor::NumElements(counts);
  for (int64_t k = 0; k < total; ++k) {
    int64_t at = 0;
    for (size_t i = 0; i < rank; ++i) at += (base[i] + index[i] * step[i]) * strides[i];
    positions.push_back(at);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < counts[i]) break;
      index[i] = 0;
    }
  }
  return positions;
}

// Reshape keeps the values in order. (Its output's type is not at hand here: libonnx's data
// propagation context does not hold the types the node's inference just gave.)
void PropagateReshape(onnx::DataPropagationContext& ctx) {
  if (auto values = KnownInts(ctx, 0)) Emit(ctx, *values);
}

// Transpose of a small integer tensor (torch.onnx's F.pad reverses its [begin, end] pairs so).
void PropagateTranspose(onnx::DataPropagationContext& ctx) {
  auto values = KnownInts(ctx, 0);
  auto dims = StaticShape(ctx.getInputType(0));
  if (!values || !dims || Tensor::NumElements(*dims) != static_cast<int64_t>(values->size())) return;
  const size_t rank = dims->size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  if (const onnx::AttributeProto* attr = ctx.getAttribute("perm")) perm.assign(attr->ints().begin(), attr->ints().end());
  if (perm.size() != rank) return;
  const std::vector<int64_t> in_strides = RowMajorStrides(*dims);
  std::vector<int64_t> out_dims(rank), strides(rank);  // per output axis: its size, its stride in the input
  for (size_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(rank)) return;
    out_dims[i] = (*dims)[static_cast<size_t>(perm[i])];
    strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  std::vector<int64_t> result;
  for (int64_t at : WalkedPositions(out_dims, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), strides))
    result.push_back((*values)[static_cast<size_t>(at)]);
  Emit(ctx, result);
}

// Slice of shape data of any rank, negative steps included (ONNX's own propagator takes 1-D data
// only). The values are copied as they come, known or not: Shape(y)[2:] keeps H and W when y's
// batch is unknown. Data of more than one axis needs its type's shape.
void PropagateSlice(onnx::DataPropagationContext& ctx) {
  const onnx::TensorShapeProto* data = ctx.getInputData(0);
  if (!data || ctx.getNumInputs() < 3) return;
  const onnx::TypeProto* type = ctx.getInputType(0);
  const bool one_axis = !type || !type->has_tensor_type() || !type->tensor_type().has_shape() || type->tensor_type().shape().dim_size() == 1;
  auto dims = one_axis ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{data->dim_size()}) : StaticShape(type);
  if (!dims || Tensor::NumElements(*dims) != data->dim_size()) return;
  auto starts = KnownInts(ctx, 1), ends = KnownInts(ctx, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.getNumInputs() > 3 && ctx.getInputType(3) && !(axes = KnownInts(ctx, 3))) return;
  if (ctx.getNumInputs() > 4 && ctx.getInputType(4) && !(steps = KnownInts(ctx, 4))) return;
  if (!starts || !ends) return;
  auto walk = WalkOfSlice(*dims, *starts, *ends, axes, steps);
  if (!walk.ok()) return;
  onnx::TensorShapeProto result;
  for (int64_t at : WalkedPositions(walk->count, walk->first, walk->step, RowMajorStrides(*dims))) *result.add_dim() = data->dim(static_cast<int>(at));
  ctx.addOutputData(0, std::move(result));
}

// ConstantOfShape of a small integer fill (torch.onnx's F.pad starts its pads list with zeros).
void PropagateConstantOfShape(onnx::DataPropagationContext& ctx) {
  auto shape = KnownInts(ctx, 0);
  if (!shape || shape->size() > 1) return;
  int64_t fill = 0;
  if (const onnx::AttributeProto* attr = ctx.getAttribute("value")) {
    const onnx::TensorProto& t = attr->t();
    if (t.data_type() == onnx::TensorProto::INT64 && t.int64_data_size() == 1) fill = t.int64_data(0);
    else if (t.data_type() == onnx::TensorProto::INT64 && t.raw_data().size() == sizeof(int64_t)) std::memcpy(&fill, t.raw_data().data(), sizeof fill);
    else if (t.data_type() == onnx::TensorProto::INT32 && t.int32_data_size() == 1) fill = t.int32_data(0);
    else if (t.data_type() == onnx::TensorProto::INT32 && t.raw_data().size() == sizeof(int32_t)) {
      int32_t v = 0;
      std::memcpy(&v, t.raw_data().data(), sizeof v);
      fill = v;
    } else return;
  }
  const int64_t n = shape->empty() ? 1 : (*shape)[0];
  if (n < 0 || n > 64) return;
  Emit(ctx, std::vector<int64_t>(static_cast<size_t>(n), fill));
}

// Concat of 1-D values, an empty one among them (libonnx 1.12's own propagator takes the number of
// its first input's values for the tensor's rank, and fails the model when there are none).
void PropagateConcat(onnx::DataPropagationContext& ctx) {
  const onnx::AttributeProto* axis = ctx.getAttribute("axis");
  if (!axis || (axis->i() != 0 && axis->i() != -1)) return;
  onnx::TensorShapeProto result;  // dimensions as they come: values, names or unknown
  for (size_t k = 0; k < ctx.getNumInputs(); ++k) {
    const onnx::TypeProto* type = ctx.getInputType(k);
    if (type && type->has_tensor_type() && type->tensor_type().has_shape() && type->tensor_type().shape().dim_size() != 1) return;
    const onnx::TensorShapeProto* data = ctx.getInputData(k);
    if (!data) return;
    for (const auto& d : data->dim()) *result.add_dim() = d;
  }
  ctx.addOutputData(0, std::move(result));
}

// Where over shape values (torch.onnx's broadcast of an expand target): the condition's values
// (an Equal's 0 and 1) pick between the two inputs', each broadcast when it holds one value.
void PropagateWhere(onnx::DataPropagationContext& ctx) {
  if (ctx.getNumInputs() != 3 || !AtMostOneAxis(ctx)) return;
  auto cond = KnownValues(ctx, 0);
  auto x = KnownInts(ctx, 1), y = KnownInts(ctx, 2);
  if (!cond || !x || !y) return;
  const size_t n = std::max({cond->size(), x->size(), y->size()});
  for (size_t size : {cond->size(), x->size(), y->size()})
    if (size != n && size != 1) return;
  std::vector<int64_t> result(n);
  for (size_t i = 0; i < n; ++i)
    result[i] = (*cond)[cond->size() == 1 ? 0 : i] ? (*x)[x->size() == 1 ? 0 : i] : (*y)[y->size() == 1 ? 0 : i];
  Emit(ctx, result);
}

// Input `k`'s values for an inference function: an initializer's or a Constant's (0-D or 1-D
// integers), else the ones data propagation carried to it.
std::optional<std::vector<int64_t>> SymbolicInts(onnx::InferenceContext& ctx, size_t k) {
  if (k >= ctx.getNumInputs() || !ctx.getInputType(k)) return std::nullopt;
  std::vector<int64_t> values;
  if (const onnx::TensorProto* t = ctx.getInputData(k)) {
    if (t->dims_size() > 1) return std::nullopt;
    if (t->data_type() == onnx::TensorProto::INT64) {
      for (int64_t v : onnx::ParseData<int64_t>(t)) values.push_back(v);
    } else if (t->data_type() == onnx::TensorProto::INT32) {
      for (int32_t v : onnx::ParseData<int32_t>(t)) values.push_back(v);
    } else {
      return std::nullopt;
    }
    return values;
  }
  return ValuesOf(ctx.getSymbolicInput(k));
}

// Input `k`'s one value as a real number: a 0-D or one-element initializer or Constant of a float or
// integer type, else the one integer data propagation carried to it (a Cast of a shape value).
std::optional<double> SymbolicReal(onnx::InferenceContext& ctx, size_t k) {
  if (k >= ctx.getNumInputs() || !ctx.getInputType(k)) return std::nullopt;
  if (const onnx::TensorProto* t = ctx.getInputData(k)) {
    std::vector<double> values;
    switch (t->data_type()) {
      case onnx::TensorProto::FLOAT: for (float v : onnx::ParseData<float>(t)) values.push_back(v); break;
      case onnx::TensorProto::DOUBLE: for (double v : onnx::ParseData<double>(t)) values.push_back(v); break;
      case onnx::TensorProto::INT64: for (int64_t v : onnx::ParseData<int64_t>(t)) values.push_back(static_cast<double>(v)); break;
      case onnx::TensorProto::INT32: for (int32_t v : onnx::ParseData<int32_t>(t)) values.push_back(v); break;
      default: return std::nullopt;
    }
    if (values.size() != 1) return std::nullopt;
    return values[0];
  }
  auto ints = ValuesOf(ctx.getSymbolicInput(k));
  if (!ints || ints->size() != 1) return std::nullopt;
  return static_cast<double>((*ints)[0]);
}

// Whether output 0's every dimension is known.
bool OutputShapeKnown(onnx::InferenceContext& ctx) {
  const onnx::TypeProto* t = ctx.getOutputType(0);
  return t && t->has_tensor_type() && StaticShape(t).has_value();
}

void SetOutputShape(onnx::InferenceContext& ctx, const std::vector<int64_t>& dims, size_t output = 0) {
  onnx::TensorShapeProto* shape = ctx.getOutputType(output)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// Output shapes ONNX's own inference functions of these ops leave unknown where an input they
// read is computed, not an initializer: from that input's propagated values.
void ShapeOfRange(onnx::InferenceContext& ctx) {
  const onnx::TypeProto* type = ctx.getInputType(0);
  const int elem = type && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
  if (elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::DOUBLE) {
    // torch.arange(n, dtype=float) of a computed n: a float Range whose limit is a Cast of shape
    // values. The count as the Range kernel (and ONNX Runtime) computes it: each input in its own
    // type, then max(ceil((limit - start) / delta), 0) in double.
    auto start = SymbolicReal(ctx, 0), limit = SymbolicReal(ctx, 1), delta = SymbolicReal(ctx, 2);
    if (!start || !limit || !delta || *delta == 0) return;
    auto own = [elem](double v) { return elem == onnx::TensorProto::FLOAT ? static_cast<double>(static_cast<float>(v)) : v; };
    if (own(*delta) == 0) return;
    const double n = std::ceil((own(*limit) - own(*start)) / own(*delta));
    if (!(n < 1e15)) return;
    SetOutputShape(ctx, {std::max<int64_t>(static_cast<int64_t>(n), 0)});
    return;
  }
  auto start = SymbolicInts(ctx, 0), limit = SymbolicInts(ctx, 1), delta = SymbolicInts(ctx, 2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1 || (*delta)[0] == 0) return;
  const int64_t span = (*limit)[0] - (*start)[0], step = (*delta)[0];
  const int64_t n = (span + step + (step > 0 ? -1 : 1)) / step;  // ceil(span / step)
  SetOutputShape(ctx, {std::max<int64_t>(n, 0)});
}

// TopK with a computed k (torch.topk(x, x.size(-1)), an argsort): values and indices both the
// input's shape with k along the axis.
void ShapeOfTopK(onnx::InferenceContext& ctx) {
  auto dims = StaticShape(ctx.getInputType(0));
  auto k = SymbolicInts(ctx, 1);
  if (!dims || dims->empty() || !k || k->size() != 1 || (*k)[0] < 0) return;
  const auto* axis_attr = ctx.getAttribute("axis");
  const int64_t rank = static_cast<int64_t>(dims->size());
  int64_t axis = axis_attr ? axis_attr->i() : -1;
  if (axis < -rank || axis >= rank) return;
  if (axis < 0) axis += rank;
  if ((*k)[0] > (*dims)[axis]) return;
  std::vector<int64_t> out = *dims;
  out[axis] = (*k)[0];
  for (size_t i = 0; i < ctx.getNumOutputs() && i < 2; ++i)
    if (const onnx::TypeProto* type = ctx.getOutputType(i); type && type->has_tensor_type()) SetOutputShape(ctx, out, i);
}

// Tile with computed repeats (torchvision's anchor grid): each input dimension times its repeat.
void ShapeOfTile(onnx::InferenceContext& ctx) {
  auto dims = StaticShape(ctx.getInputType(0));
  auto repeats = SymbolicInts(ctx, 1);
  if (!dims || !repeats || repeats->size() != dims->size()) return;
  std::vector<int64_t> out(dims->size());
  for (size_t i = 0; i < dims->size(); ++i) {
    if ((*repeats)[i] < 0) return;
    out[i] = (*dims)[i] * (*repeats)[i];
  }
  SetOutputShape(ctx, out);
}

void ShapeOfSlice(onnx::InferenceContext& ctx) {
  auto dims = StaticShape(ctx.getInputType(0));
  if (!dims || ctx.getNumInputs() < 3) return;
  auto starts = SymbolicInts(ctx, 1), ends = SymbolicInts(ctx, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.getNumInputs() > 3 && ctx.getInputType(3) && !(axes = SymbolicInts(ctx, 3))) return;
  if (ctx.getNumInputs() > 4 && ctx.getInputType(4) && !(steps = SymbolicInts(ctx, 4))) return;
  if (!starts || !ends) return;
  if (auto walk = WalkOfSlice(*dims, *starts, *ends, axes, steps); walk.ok()) SetOutputShape(ctx, walk->count);
}

void ShapeOfPad(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() > 3 && ctx.getInputType(3)) return;  // pads over chosen axes (opset 18)
  auto pads = SymbolicInts(ctx, 1);
  auto dims = StaticShape(ctx.getInputType(0));
  if (!pads || !dims || pads->size() != 2 * dims->size()) return;
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims->size(); ++i) {
    const int64_t d = (*dims)[i] + (*pads)[i] + (*pads)[i + dims->size()];
    if (d < 0) return;
    out.push_back(d);
  }
  SetOutputShape(ctx, out);
}

// OneHot: ONNX's inference leaves the depth axis unknown even where depth is a constant (torch.onnx's
// F.one_hot writes it as a Constant node): the indices' shape with depth inserted at `axis`.
void ShapeOfOneHot(onnx::InferenceContext& ctx) {
  auto dims = StaticShape(ctx.getInputType(0));
  auto depth = SymbolicInts(ctx, 1);
  if (!dims || !depth || depth->size() != 1 || (*depth)[0] <= 0) return;
  const auto* axis_attr = ctx.getAttribute("axis");
  const int64_t rank = static_cast<int64_t>(dims->size()) + 1;
  int64_t axis = axis_attr ? axis_attr->i() : -1;
  if (axis < -rank || axis >= rank) return;
  if (axis < 0) axis += rank;
  std::vector<int64_t> out = *dims;
  out.insert(out.begin() + axis, (*depth)[0]);
  SetOutputShape(ctx, out);
}

// Resize with computed `sizes` (torch.onnx's F.interpolate(size=...): Concat(Shape(x)[:2], size)):
// the output shape is the sizes, where they are as many as the input's axes.
void ShapeOfResize(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 4 || !ctx.getInputType(3)) return;
  auto sizes = SymbolicInts(ctx, 3);
  if (!sizes || sizes->empty()) return;
  const onnx::TypeProto* x = ctx.getInputType(0);
  if (x && x->has_tensor_type() && x->tensor_type().has_shape() && x->tensor_type().shape().dim_size() != static_cast<int>(sizes->size())) return;
  for (int64_t d : *sizes)
    if (d < 0) return;
  SetOutputShape(ctx, *sizes);
}

void Register(const char* op_type, onnx::DataPropagationFunction propagate) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, kExecutorOpset, "");
  // The registry owns its schemas as mutable objects; it hands them out const.
  if (schema) const_cast<onnx::OpSchema*>(schema)->PartialDataPropagationFunction(std::move(propagate));
}

// libonnx's own propagator of `op_type` runs only where every input has at most one axis.
void KeepToOneAxis(const char* op_type) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, kExecutorOpset, "");
  if (!schema) return;
  onnx::DataPropagationFunction own = schema->GetDataPropagationFunction();
  const_cast<onnx::OpSchema*>(schema)->PartialDataPropagationFunction([own](onnx::DataPropagationContext& ctx) {
    if (own && AtMostOneAxis(ctx)) own(ctx);
  });
}

// `fill` runs after the schema's own inference function, where that left the output shape unknown.
void RegisterShapeFallback(const char* op_type, void (*fill)(onnx::InferenceContext&)) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, kExecutorOpset, "");
  if (!schema) return;
  onnx::InferenceFunction own = schema->GetTypeAndShapeInferenceFunction();
  const_cast<onnx::OpSchema*>(schema)->TypeAndShapeInferenceFunction([own, fill](onnx::InferenceContext& ctx) {
    if (own) own(ctx);
    if (ctx.getNumOutputs() >= 1 && ctx.getOutputType(0) && ctx.getOutputType(0)->has_tensor_type() && !OutputShapeKnown(ctx)) fill(ctx);
  });
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
    // torch.onnx's F.pad computes its pads as a [begin, end] pair per axis reversed: ConstantOfShape,
    // Concat, Reshape to 2-D, Slice with step -1, Transpose, Reshape to 1-D, Cast.
    Register("Equal", Elementwise([](int64_t a, int64_t b) -> std::optional<int64_t> { return a == b ? 1 : 0; }));
    Register("Where", PropagateWhere);
    Register("Concat", PropagateConcat);
    for (const char* op_type : {"Add", "Sub", "Mul", "Gather"}) KeepToOneAxis(op_type);
    Register("Reshape", PropagateReshape);
    Register("Transpose", PropagateTranspose);
    Register("Slice", PropagateSlice);
    Register("ConstantOfShape", PropagateConstantOfShape);
    RegisterShapeFallback("Range", ShapeOfRange);
    RegisterShapeFallback("Tile", ShapeOfTile);
    RegisterShapeFallback("TopK", ShapeOfTopK);
    RegisterShapeFallback("Pad", ShapeOfPad);
    RegisterShapeFallback("Slice", ShapeOfSlice);
    RegisterShapeFallback("OneHot", ShapeOfOneHot);
    RegisterShapeFallback("Resize", ShapeOfResize);
  });
}

}  // namespace tilebank::engine::model
