// Cast (to the type its `to` attribute names) and CastLike (to its second input's type): between
// every numeric type and bool as TypedTensor::CastTo converts, and to and from strings (numbers
// written in the shortest form that reads back the same, as numpy prints them; read as C's
// strtod and strtoll do).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/core/cast_elements.h"
#include "engine/core/parallel_for.h"
#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

// The shortest %g form of `v` that reads back as the same value of type T.
template <class T>
std::string NumberText(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (static_cast<T>(std::strtod(text, nullptr)) == static_cast<T>(v)) break;
  }
  return text;
}

Status ToStrings(const KernelInfo& info, const TypedTensor& x, TypedTensor* y) {
  *y = TypedTensor(DType::kString, x.shape);
  Status status = Status::Ok();
  VisitNumeric(
      x.dtype,
      [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < x.size(); ++i) {
          if constexpr (std::is_same_v<T, bool>) y->strings[i] = x.data<bool>()[i] ? "1" : "0";
          else if constexpr (std::is_integral_v<T>) y->strings[i] = std::to_string(x.data<T>()[i]);
          else if constexpr (std::is_same_v<T, double>) y->strings[i] = NumberText<double>(x.data<T>()[i]);
          else y->strings[i] = NumberText<float>(static_cast<float>(x.data<T>()[i]));
        }
      },
      [&] { status = info.Bad("cannot cast " + DTypeName(x.dtype) + " to string"); });
  return status;
}

Status FromStrings(const KernelInfo& info, const TypedTensor& x, DType to, TypedTensor* y) {
  if (!IsNumeric(to)) return info.Bad("cannot cast string to " + DTypeName(to));
  *y = TypedTensor(to, x.shape);
  for (int64_t i = 0; i < x.size(); ++i) {
    const std::string& s = x.strings[i];
    char* end = nullptr;
    errno = 0;
    if (IsInteger(to) || to == DType::kBool) {
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (end == s.c_str()) return info.Bad("element " + std::to_string(i) + " '" + s + "' is not an integer");
      y->SetIntAt(i, v);
    } else {
      const double v = std::strtod(s.c_str(), &end);
      if (end == s.c_str()) return info.Bad("element " + std::to_string(i) + " '" + s + "' is not a number");
      y->SetAt(i, v);
    }
  }
  return Status::Ok();
}

Status CastTensor(const KernelInfo& info, const TypedTensor& x, DType to, TypedTensor* y) {
  if (to == DType::kUndefined || to == DType::kComplex64 || to == DType::kComplex128) return info.Bad("cannot cast to " + DTypeName(to));
  if (x.dtype == to) {
    *y = x;
    return Status::Ok();
  }
  if (to == DType::kString) return ToStrings(info, x, y);
  if (x.dtype == DType::kString) return FromStrings(info, x, to, y);
  if (!IsNumeric(x.dtype) || !IsNumeric(to)) {
    *y = x.CastTo(to);
    return Status::Ok();
  }
  ReshapeForOverwrite(y, to, x.shape);  // last run's buffer, on the threads
  ParallelForChunks(x.size(), int64_t{1} << 15, [&](int64_t first, int64_t count) { CastElements(x, first, count, y); });
  return Status::Ok();
}

Result<std::unique_ptr<OpKernel>> MakeCast(const KernelInfo& info) {
  const DType to = DTypeOfOnnx(static_cast<int>(info.attrs.Int("to", 0)));
  if (to == DType::kUndefined) return info.Bad("attribute 'to' names no type");
  return FunctionKernel([info, to](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.empty() || !in[0]) return info.Bad("takes an input");
    return CastTensor(info, *in[0], to, &(*out)[0]);
  });
}

Result<std::unique_ptr<OpKernel>> MakeCastLike(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() != 2 || !in[0] || !in[1]) return info.Bad("takes two inputs");
    return CastTensor(info, *in[0], in[1]->dtype, &(*out)[0]);
  });
}

}  // namespace

void RegisterCastKernels(KernelRegistry* r) {
  r->Add({"Cast", 6, INT_MAX, AllTypes(), 0, MakeCast});
  r->Add({"CastLike", 15, INT_MAX, AllTypes(), 0, MakeCastLike});
}

}  // namespace tilebank::engine::kernels
