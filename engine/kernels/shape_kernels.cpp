// Ops about shapes: Shape, Size, Identity, Reshape, Flatten, Squeeze, Unsqueeze, Expand,
// ConstantOfShape, Range and EyeLike. Shapes come from inputs' values at run time.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// A kernel whose output is its first input's elements under another shape.
Status Reshaped(const KernelInputs& in, std::vector<int64_t> shape, std::vector<TypedTensor>* out) {
  TypedTensor y = *in[0];
  y.shape = std::move(shape);
  (*out)[0] = std::move(y);
  return Status::Ok();
}

// The axes of Squeeze/Unsqueeze (and others): input 1 from opset 13, else the attribute.
std::optional<std::vector<int64_t>> AxesOf(const KernelInfo& info, const KernelInputs& in, int since_input_opset) {
  if (info.opset >= since_input_opset) {
    if (in.size() > 1 && in[1]) return IntValues(*in[1]);
    return std::nullopt;
  }
  if (info.attrs.Has("axes")) return info.attrs.Ints("axes");
  return std::nullopt;
}

Result<std::unique_ptr<OpKernel>> MakeShape(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const int64_t rank = in[0]->rank();
    int64_t start = info.attrs.Int("start", 0), end = info.attrs.Int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    (*out)[0] = TypedTensor::Of<int64_t>({end - start}, std::vector<int64_t>(in[0]->shape.begin() + start, in[0]->shape.begin() + end));
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeReshape(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[1]) return info.Bad("takes the new shape as input 1");
    std::vector<int64_t> shape = IntValues(*in[1]);
    const bool allow_zero = info.attrs.Int("allowzero", 0) != 0;
    int64_t known = 1, infer = -1;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 0 && !allow_zero) {
        if (k >= in[0]->shape.size()) return info.Bad("a 0 in the shape copies a dimension the input does not have");
        shape[k] = in[0]->shape[k];
      }
      if (shape[k] == -1) {
        if (infer >= 0) return info.Bad("the shape has more than one -1");
        infer = static_cast<int64_t>(k);
      } else if (shape[k] < 0) {
        return info.Bad("the shape has a negative dimension");
      } else {
        known *= shape[k];
      }
    }
    if (infer >= 0) {
      if (known == 0 || in[0]->size() % known != 0) return info.Bad("cannot infer the -1 dimension");
      shape[infer] = in[0]->size() / known;
    }
    if (Tensor::NumElements(shape) != in[0]->size())
      return info.Bad("cannot reshape " + ShapeText(in[0]->shape) + " to " + ShapeText(shape));
    return Reshaped(in, shape, out);
  });
}

Result<std::unique_ptr<OpKernel>> MakeFlatten(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const int64_t rank = in[0]->rank();
    int64_t axis = info.attrs.Int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return info.Bad("axis outside the input's rank");
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= in[0]->shape[k];
    return Reshaped(in, {outer, outer ? in[0]->size() / outer : 0}, out);
  });
}

Result<std::unique_ptr<OpKernel>> MakeSqueeze(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const auto& s = in[0]->shape;
    const int64_t rank = static_cast<int64_t>(s.size());
    std::vector<bool> drop(s.size(), false);
    if (auto axes = AxesOf(info, in, 13)) {
      for (int64_t a : *axes) {
        auto axis = Axis(a, rank);
        if (!axis || s[*axis] != 1) return info.Bad("axis " + std::to_string(a) + " is not a dimension of size 1");
        drop[*axis] = true;
      }
    } else {
      for (size_t k = 0; k < s.size(); ++k) drop[k] = s[k] == 1;
    }
    std::vector<int64_t> shape;
    for (size_t k = 0; k < s.size(); ++k)
      if (!drop[k]) shape.push_back(s[k]);
    return Reshaped(in, shape, out);
  });
}

Result<std::unique_ptr<OpKernel>> MakeUnsqueeze(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    auto axes = AxesOf(info, in, 13);
    if (!axes) return info.Bad("needs axes");
    const int64_t rank = in[0]->rank() + static_cast<int64_t>(axes->size());
    std::vector<bool> added(rank, false);
    for (int64_t a : *axes) {
      auto axis = Axis(a, rank);
      if (!axis || added[*axis]) return info.Bad("axis " + std::to_string(a) + " is outside the output's rank or repeated");
      added[*axis] = true;
    }
    std::vector<int64_t> shape;
    size_t next = 0;
    for (int64_t k = 0; k < rank; ++k) shape.push_back(added[k] ? 1 : in[0]->shape[next++]);
    return Reshaped(in, shape, out);
  });
}

Result<std::unique_ptr<OpKernel>> MakeExpand(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[1]) return info.Bad("takes the shape as input 1");
    std::vector<int64_t> shape;
    if (!BroadcastShapes({in[0]->shape, IntValues(*in[1])}, &shape))
      return info.Bad(ShapeText(in[0]->shape) + " does not broadcast to " + ShapeText(IntValues(*in[1])));
    const size_t bytes = ElementBytes(in[0]->dtype);
    if (in[0]->dtype == DType::kString || bytes == 0) {
      TypedTensor y(in[0]->dtype, shape);
      BroadcastWalk walk({in[0]->shape}, shape);
      for (int64_t j = 0; j < y.size(); ++j, walk.Next()) CopyElement(*in[0], walk.offset(0), &y, j);
      (*out)[0] = std::move(y);
      return Status::Ok();
    }
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, in[0]->dtype, shape);  // last run's buffer, every element written
    if (y.size() > 0) {  // rows copied, or one element repeated along them
      const BroadcastRows rows({in[0]->shape}, shape);
      const int64_t inner = rows.inner();
      const std::byte* from = in[0]->bytes.data();
      std::byte* to = y.bytes.data();
      ParallelFor(rows.rows(), std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const std::byte* src = from + rows.RowStart(0, r) * bytes;
          std::byte* dst = to + r * inner * bytes;
          if (rows.step(0)) std::memcpy(dst, src, inner * bytes);
          else RepeatElement(src, bytes, inner, dst);
        }
      });
    }
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeConstantOfShape(const KernelInfo& info) {
  auto value = info.tensor_attrs.find("value");
  const TypedTensor fill = value != info.tensor_attrs.end() ? value->second : TypedTensor(DType::kFloat32, {1});
  if (fill.size() != 1) return info.Bad("'value' must hold one element");
  return FunctionKernel([info, fill](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const std::vector<int64_t> shape = IntValues(*in[0]);
    for (int64_t d : shape)
      if (d < 0) return info.Bad("negative dimension in " + ShapeText(shape));
    if (fill.dtype == DType::kString) {
      (*out)[0] = Gathered(fill, shape, [](int64_t) { return int64_t{0}; });
      return Status::Ok();
    }
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, fill.dtype, shape);  // last run's buffer, every element written
    const size_t bytes = fill.bytes.size();
    const bool zero = std::all_of(fill.bytes.begin(), fill.bytes.end(), [](std::byte b) { return b == std::byte{0}; });
    ParallelFor(y.size(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      if (zero) std::memset(y.bytes.data() + begin * bytes, 0, static_cast<size_t>(end - begin) * bytes);
      else RepeatElement(fill.bytes.data(), bytes, end - begin, y.bytes.data() + begin * bytes);
    });
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeRange(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() != 3 || !in[0] || !in[1] || !in[2] || in[0]->size() != 1 || in[1]->size() != 1 || in[2]->size() != 1)
      return info.Bad("takes scalar start, limit and delta");
    Status status = Status::Ok();
    VisitNumeric(
        in[0]->dtype,
        [&](auto tag) {
          using T = decltype(tag);
          using C = Calc<T>;
          const C start = C(in[0]->data<T>()[0]), limit = C(in[1]->data<T>()[0]), delta = C(in[2]->data<T>()[0]);
          if (delta == C(0)) {
            status = info.Bad("delta is 0");
            return;
          }
          const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
          const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
          if (n > (int64_t{1} << 32)) {
            status = info.Bad("more than 2^32 elements");
            return;
          }
          TypedTensor y(in[0]->dtype, {n});
          for (int64_t i = 0; i < n; ++i) y.data<T>()[i] = Store<T>(start + static_cast<C>(i) * delta);
          (*out)[0] = std::move(y);
        },
        [&] { status = info.Bad(DTypeName(in[0]->dtype) + " is not a numeric type"); });
    return status;
  });
}

Result<std::unique_ptr<OpKernel>> MakeEyeLike(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in[0]->rank() != 2) return info.Bad("takes a 2-D input");
    const DType dtype = info.attrs.Has("dtype") ? DTypeOfOnnx(static_cast<int>(info.attrs.Int("dtype", 1))) : in[0]->dtype;
    if (!IsNumeric(dtype)) return info.Bad("dtype must be numeric");
    const int64_t k = info.attrs.Int("k", 0), rows = in[0]->shape[0], cols = in[0]->shape[1];
    TypedTensor y(dtype, in[0]->shape);
    for (int64_t r = 0; r < rows; ++r)
      if (r + k >= 0 && r + k < cols) y.SetIntAt(r * cols + r + k, 1);
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

}  // namespace

void RegisterShapeKernels(KernelRegistry* r) {
  const auto& all = AllTypes();
  r->Add({"Shape", 1, INT_MAX, all, 0, MakeShape});
  r->Add({"Size", 1, INT_MAX, all, 0, [](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
            return FunctionKernel([](const KernelInputs& in, std::vector<TypedTensor>* out) {
              (*out)[0] = TypedTensor::Of<int64_t>({}, {in[0]->size()});
              return Status::Ok();
            });
          }});
  r->Add({"Identity", 1, INT_MAX, all, 0, [](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
            return FunctionKernel([](const KernelInputs& in, std::vector<TypedTensor>* out) {
              (*out)[0] = *in[0];
              return Status::Ok();
            });
          }, /*any_kind=*/true});  // a sequence or an optional passes through as it is
  r->Add({"Reshape", 5, INT_MAX, all, 0, MakeReshape});
  r->Add({"Flatten", 1, INT_MAX, all, 0, MakeFlatten});
  r->Add({"Squeeze", 1, INT_MAX, all, 0, MakeSqueeze});
  r->Add({"Unsqueeze", 1, INT_MAX, all, 0, MakeUnsqueeze});
  r->Add({"Expand", 8, INT_MAX, all, 0, MakeExpand});
  r->Add({"ConstantOfShape", 9, INT_MAX, {DType::kInt64}, 0, MakeConstantOfShape});
  r->Add({"Range", 11, INT_MAX, {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64}, 0, MakeRange});
  r->Add({"EyeLike", 9, INT_MAX, NumericTypes(), 0, MakeEyeLike});
}

}  // namespace tilebank::engine::kernels
