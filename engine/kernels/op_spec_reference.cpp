#include "engine/kernels/op_spec_reference.h"

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

constexpr int kModelOpset = 17;  // the opset the importer converts every model to

// `t` with its last two dimensions swapped.
TypedTensor TransposedLastTwo(const Tensor& t) {
  const int r = t.rank();
  std::vector<int64_t> shape = t.shape;
  std::swap(shape[r - 1], shape[r - 2]);
  TypedTensor out(DType::kFloat32, shape);
  const int64_t rows = t.shape[r - 2], cols = t.shape[r - 1], batch = t.size() / std::max<int64_t>(1, rows * cols);
  float* y = out.data<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) y[(b * cols + j) * rows + i] = t.data[(b * rows + i) * cols + j];
  return out;
}

}  // namespace

Result<Tensor> ReferenceOf(const OpSpec& op, const std::vector<const Tensor*>& inputs) {
  KernelInfo info;
  info.op_type = op.op_type;
  info.node_name = op.name;
  info.opset = kModelOpset;
  nlohmann::json attrs = op.attrs;
  std::vector<TypedTensor> operands;
  for (size_t i = 0; i < inputs.size(); ++i) operands.push_back(TypedTensor::FromFloat(*inputs[i]));
  if (op.op_type == "MatMul" || op.op_type == "BatchMatMul") {
    info.op_type = "MatMul";
    for (const auto& [flag, operand] : {std::pair{"transpose_a", size_t{0}}, std::pair{"transpose_b", size_t{1}}}) {
      if (op.Int(flag, 0) == 0) continue;
      if (operand >= inputs.size() || inputs[operand]->rank() < 2) return Status::InvalidInput(op.name + " (" + op.op_type + "): " + flag + " needs a matrix");
      operands[operand] = TransposedLastTwo(*inputs[operand]);
      attrs.erase(flag);
    }
  } else if (op.op_type == "Clip" && (attrs.contains("min") || attrs.contains("max"))) {
    info.opset = 10;
  } else if (op.op_type == "Gelu") {
    info.opset = 20;
  }
  info.attrs = Attrs(attrs);
  KernelInputs in;
  for (const auto& t : operands) {
    info.input_types.push_back(t.dtype);
    in.push_back(&t);
  }
  auto kernel = KernelRegistry::Default().Create(info, KernelDef::kReferenceImplementation);
  if (!kernel.ok()) return kernel.status();
  std::vector<TypedTensor> outputs(1);
  TB_RETURN_IF_ERROR((*kernel)->Compute(in, &outputs));
  Tensor y = outputs[0].ToFloat();
  if (!op.outputs.empty()) {
    if (y.size() != Tensor::NumElements(op.outputs[0].shape))
      return Status::InvalidInput(op.name + " (" + op.op_type + "): the reference computes " + ShapeText(y.shape) + ", the description says " +
                                  ShapeText(op.outputs[0].shape));
    y.shape = op.outputs[0].shape;  // a reduction's kept or dropped dimensions as described
  }
  return y;
}

}  // namespace tilebank::engine::kernels
