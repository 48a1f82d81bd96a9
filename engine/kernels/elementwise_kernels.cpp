// Elementwise ops over numpy-broadcast operands: arithmetic (Add, Sub, Mul, Div, Mod, Pow, PRelu),
// the variadic Min, Max, Sum and Mean, comparisons, logic (And, Or, Xor, BitShift) and Where.
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/core/broadcast.h"
#include "engine/core/parallel_for.h"
#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

// A binary op computing in Calc<T> and storing T: f(Calc<T>, Calc<T>) -> Calc<T>.
template <class F>
KernelFactory SameType(F f) {
  return [f](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([f, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.size() != 2 || !in[0] || !in[1]) return info.Bad("takes two inputs");
      if (in[0]->dtype != in[1]->dtype)
        return info.Bad("inputs are " + DTypeName(in[0]->dtype) + " and " + DTypeName(in[1]->dtype) + "; they must be of one type");
      Status status = Status::Ok(), error = Status::Ok();  // error: what f found in the values
      VisitNumeric(
          in[0]->dtype,
          [&](auto tag) {
            using T = decltype(tag);
            status = Map2<T, T, T>(info, *in[0], *in[1], &(*out)[0], [&](T a, T b) { return Store<T>(f(Calc<T>(a), Calc<T>(b), &error)); });
          },
          [&] { status = info.Bad(DTypeName(in[0]->dtype) + " is not a numeric type"); });
      if (status.ok() && !error.ok()) return info.Bad(error.message());
      return status;
    });
  };
}

// PRelu: numpy broadcasting, and (as PRelu-6 and earlier defined it, kept by the version
// converter) a 1-D slope of one value per channel applies along axis 1.
Result<std::unique_ptr<OpKernel>> MakePRelu(const KernelInfo& info) {
  auto elementwise = SameType([](auto x, auto slope, Status*) { return x < 0 ? x * slope : x; })(info);
  if (!elementwise.ok()) return elementwise.status();
  std::shared_ptr<OpKernel> kernel = std::move(elementwise.value());
  return FunctionKernel([kernel](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() == 2 && in[0] && in[1] && in[1]->rank() == 1 && in[0]->rank() > 2 && in[1]->size() == in[0]->shape[1] && in[1]->size() != in[0]->shape.back()) {
      TypedTensor slope = *in[1];
      slope.shape.resize(in[0]->rank() - 1, 1);
      return kernel->Compute({in[0], &slope}, out);
    }
    return kernel->Compute(in, out);
  });
}

// Integer division: by zero is an error, INT_MIN / -1 wraps.
template <class V>
V Divide(V a, V b, Status* status) {
  if constexpr (std::is_integral_v<V>) {
    if (b == 0) {
      if (status->ok()) *status = Status::InvalidInput("integer division by zero");
      return 0;
    }
    if constexpr (std::is_signed_v<V>)
      if (a == std::numeric_limits<V>::min() && b == -1) return a;
  }
  return a / b;
}

template <class V>
V Modulo(V a, V b, bool fmod, Status* status) {
  if constexpr (std::is_integral_v<V>) {
    if (b == 0) {
      if (status->ok()) *status = Status::InvalidInput("integer modulo by zero");
      return 0;
    }
    if constexpr (std::is_signed_v<V>) {
      if (b == -1) return 0;
      V r = a % b;
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;  // the divisor's sign, as Python's %
      return r;
    } else {
      return a % b;
    }
  } else {
    return static_cast<V>(std::fmod(a, b));
  }
}

// Pow: the base's type; the exponent of any numeric type.
Result<std::unique_ptr<OpKernel>> MakePow(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() != 2 || !in[0] || !in[1]) return info.Bad("takes two inputs");
    Status status = Status::Ok();
    VisitNumeric(
        in[0]->dtype,
        [&](auto base_tag) {
          using T = decltype(base_tag);
          VisitNumeric(
              in[1]->dtype,
              [&](auto exp_tag) {
                using E = decltype(exp_tag);
                status = Map2<T, E, T>(info, *in[0], *in[1], &(*out)[0], [](T a, E b) {
                  const double base = static_cast<double>(static_cast<Calc<T>>(a)), power = static_cast<double>(static_cast<Calc<E>>(b));
                  if constexpr (std::is_integral_v<T>) {
                    // Integer powers are exact: repeated squaring, wrapping as the type does.
                    int64_t e = static_cast<int64_t>(power);
                    if (e < 0) return Store<T>(base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0);
                    T result = 1, factor = a;
                    for (; e > 0; e >>= 1, factor = static_cast<T>(factor * factor))
                      if (e & 1) result = static_cast<T>(result * factor);
                    return result;
                  } else {
                    return Store<T>(std::pow(base, power));
                  }
                });
              },
              [&] { status = info.Bad("exponent of type " + DTypeName(in[1]->dtype)); });
        },
        [&] { status = info.Bad("base of type " + DTypeName(in[0]->dtype)); });
    return status;
  });
}

// Min, Max, Sum, Mean: folded pairwise over any number of broadcast inputs.
template <class F>
KernelFactory Variadic(F f, bool mean = false) {
  return [f, mean](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([f, mean, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.empty() || !in[0]) return info.Bad("takes at least one input");
      Status status = Status::Ok();
      VisitNumeric(
          in[0]->dtype,
          [&](auto tag) {
            using T = decltype(tag);
            TypedTensor acc = *in[0];
            for (size_t k = 1; k < in.size() && status.ok(); ++k) {
              if (!in[k] || in[k]->dtype != acc.dtype) {
                status = info.Bad("inputs must all be of one type");
                return;
              }
              TypedTensor next;
              status = Map2<T, T, T>(info, acc, *in[k], &next, [&](T a, T b) { return Store<T>(f(Calc<T>(a), Calc<T>(b))); });
              acc = std::move(next);
            }
            if (mean && status.ok())
              for (int64_t i = 0; i < acc.size(); ++i) acc.data<T>()[i] = Store<T>(Calc<T>(acc.data<T>()[i]) / static_cast<Calc<T>>(in.size()));
            (*out)[0] = std::move(acc);
          },
          [&] { status = info.Bad(DTypeName(in[0]->dtype) + " is not a numeric type"); });
      return status;
    });
  };
}

// Comparisons: bool outputs; numbers compare in their computing type, strings as strings.
template <class F>
KernelFactory Compare(F f) {
  return [f](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([f, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.size() != 2 || !in[0] || !in[1]) return info.Bad("takes two inputs");
      if (in[0]->dtype != in[1]->dtype) return info.Bad("inputs must be of one type");
      if (in[0]->dtype == DType::kString) {
        std::vector<int64_t> shape;
        if (!BroadcastShapes({in[0]->shape, in[1]->shape}, &shape)) return info.Bad("inputs do not broadcast");
        (*out)[0] = TypedTensor(DType::kBool, shape);
        BroadcastWalk walk({in[0]->shape, in[1]->shape}, shape);
        for (int64_t i = 0; i < (*out)[0].size(); ++i, walk.Next())
          (*out)[0].data<bool>()[i] = f(in[0]->strings[walk.offset(0)], in[1]->strings[walk.offset(1)]);
        return Status::Ok();
      }
      Status status = Status::Ok();
      VisitNumeric(
          in[0]->dtype,
          [&](auto tag) {
            using T = decltype(tag);
            status = Map2<T, T, bool>(info, *in[0], *in[1], &(*out)[0], [&](T a, T b) { return f(Calc<T>(a), Calc<T>(b)); });
          },
          [&] { status = info.Bad(DTypeName(in[0]->dtype) + " cannot be compared"); });
      return status;
    });
  };
}

template <class F>
KernelFactory Logical(F f) {
  return [f](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([f, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      if (in.size() != 2 || !in[0] || !in[1] || in[0]->dtype != DType::kBool || in[1]->dtype != DType::kBool) return info.Bad("takes two bool inputs");
      return Map2<bool, bool, bool>(info, *in[0], *in[1], &(*out)[0], f);
    });
  };
}

Result<std::unique_ptr<OpKernel>> MakeBitShift(const KernelInfo& info) {
  const bool left = info.attrs.String("direction", "") == "LEFT";
  if (!left && info.attrs.String("direction", "") != "RIGHT") return info.Bad("direction must be LEFT or RIGHT");
  return FunctionKernel([info, left](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() != 2 || !in[0] || !in[1] || in[0]->dtype != in[1]->dtype) return info.Bad("takes two inputs of one type");
    Status status = Status::Ok();
    VisitNumeric(
        in[0]->dtype,
        [&](auto tag) {
          using T = decltype(tag);
          if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
            status = Map2<T, T, T>(info, *in[0], *in[1], &(*out)[0], [left](T a, T b) {
              if (b >= sizeof(T) * 8) return T{0};
              return static_cast<T>(left ? a << b : a >> b);
            });
          } else {
            status = info.Bad("BitShift takes unsigned integers");
          }
        },
        [&] { status = info.Bad("BitShift takes unsigned integers"); });
    return status;
  });
}

// Where over fixed-size elements (T: an unsigned integer of the element's size): rows of the
// output's last axis on the threads, each input read along it with stride 1 or 0 (broadcast).
template <class T>
void SelectRows(const KernelInputs& in, const std::vector<int64_t>& shape, TypedTensor* y) {
  const size_t rank = shape.size();
  const int64_t inner = rank ? shape.back() : 1, rows = inner ? y->size() / inner : 0;
  std::vector<std::vector<int64_t>> strides;
  for (int i = 0; i < 3; ++i) strides.push_back(BroadcastStrides(in[i]->shape, shape));
  const bool* c = in[0]->data<bool>();
  const T* x = reinterpret_cast<const T*>(in[1]->bytes.data());
  const T* z = reinterpret_cast<const T*>(in[2]->bytes.data());
  T* out = reinterpret_cast<T*>(y->bytes.data());
  ParallelFor(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t offset[3];
      BroadcastRowOffsets(r, shape, strides, offset);
      const int64_t sc = rank ? strides[0].back() : 0, sx = rank ? strides[1].back() : 0, sz = rank ? strides[2].back() : 0;
      const bool* cr = c + offset[0];
      const T *xr = x + offset[1], *zr = z + offset[2];
      T* o = out + r * inner;
      // Branch-free: a mask from the condition picks the bits (a graph attention's mask is random
      // to the branch predictor: 5x slower with a branch per element).
      for (int64_t k = 0; k < inner; ++k) {
        const T a = xr[k * sx], b = zr[k * sz], mask = static_cast<T>(T(0) - static_cast<T>(cr[k * sc]));
        o[k] = static_cast<T>(b ^ ((a ^ b) & mask));
      }
    }
  });
}

Result<std::unique_ptr<OpKernel>> MakeWhere(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() != 3 || !in[0] || !in[1] || !in[2] || in[0]->dtype != DType::kBool || in[1]->dtype != in[2]->dtype)
      return info.Bad("takes a bool condition and two inputs of one type");
    std::vector<int64_t> shape;
    if (!BroadcastShapes({in[0]->shape, in[1]->shape, in[2]->shape}, &shape)) return info.Bad("inputs do not broadcast");
    TypedTensor& y = (*out)[0];
    const size_t bytes = in[1]->dtype == DType::kString ? 0 : ElementBytes(in[1]->dtype);
    if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) {
      ReshapeForOverwrite(&y, in[1]->dtype, shape);
      switch (bytes) {
        case 1: SelectRows<uint8_t>(in, shape, &y); return Status::Ok();
        case 2: SelectRows<uint16_t>(in, shape, &y); return Status::Ok();
        case 4: SelectRows<uint32_t>(in, shape, &y); return Status::Ok();
        default: SelectRows<uint64_t>(in, shape, &y); return Status::Ok();
      }
    }
    y = TypedTensor(in[1]->dtype, shape);
    BroadcastWalk walk({in[0]->shape, in[1]->shape, in[2]->shape}, shape);
    const bool* c = in[0]->data<bool>();
    for (int64_t i = 0; i < y.size(); ++i, walk.Next()) {
      const TypedTensor& from = c[walk.offset(0)] ? *in[1] : *in[2];
      const int64_t at = walk.offset(c[walk.offset(0)] ? 1 : 2);
      if (y.dtype == DType::kString) y.strings[i] = from.strings[at];
      else std::memcpy(y.bytes.data() + i * bytes, from.bytes.data() + at * bytes, bytes);
    }
    return Status::Ok();
  });
}

}  // namespace

void RegisterElementwiseKernels(KernelRegistry* r) {
  const auto& numeric = NumericTypes();
  r->Add({"Add", 7, INT_MAX, numeric, 0, SameType([](auto a, auto b, Status*) { return a + b; })});
  r->Add({"Sub", 7, INT_MAX, numeric, 0, SameType([](auto a, auto b, Status*) { return a - b; })});
  r->Add({"Mul", 7, INT_MAX, numeric, 0, SameType([](auto a, auto b, Status*) { return a * b; })});
  r->Add({"Div", 7, INT_MAX, numeric, 0, SameType([](auto a, auto b, Status* s) { return Divide(a, b, s); })});
  r->Add({"Mod", 10, INT_MAX, numeric, 0, [](const KernelInfo& info) {
            const bool fmod = info.attrs.Int("fmod", 0) != 0;
            return SameType([fmod](auto a, auto b, Status* s) { return Modulo(a, b, fmod, s); })(info);
          }});
  r->Add({"Pow", 7, INT_MAX, numeric, 0, MakePow});
  r->Add({"PRelu", 7, INT_MAX, numeric, 0, MakePRelu});
  r->Add({"Min", 8, INT_MAX, numeric, 0, Variadic([](auto a, auto b) { return std::isnan(static_cast<double>(a)) || a < b ? a : b; })});
  r->Add({"Max", 8, INT_MAX, numeric, 0, Variadic([](auto a, auto b) { return std::isnan(static_cast<double>(a)) || a > b ? a : b; })});
  r->Add({"Sum", 8, INT_MAX, FloatTypes(), 0, Variadic([](auto a, auto b) { return a + b; })});
  r->Add({"Mean", 8, INT_MAX, FloatTypes(), 0, Variadic([](auto a, auto b) { return a + b; }, /*mean=*/true)});
  std::vector<DType> comparable = numeric;
  comparable.push_back(DType::kBool);
  std::vector<DType> equatable = comparable;
  equatable.push_back(DType::kString);
  r->Add({"Equal", 7, INT_MAX, equatable, 0, Compare([](const auto& a, const auto& b) { return a == b; })});
  r->Add({"Less", 7, INT_MAX, comparable, 0, Compare([](const auto& a, const auto& b) { return a < b; })});
  r->Add({"Greater", 7, INT_MAX, comparable, 0, Compare([](const auto& a, const auto& b) { return a > b; })});
  r->Add({"LessOrEqual", 12, INT_MAX, comparable, 0, Compare([](const auto& a, const auto& b) { return a <= b; })});
  r->Add({"GreaterOrEqual", 12, INT_MAX, comparable, 0, Compare([](const auto& a, const auto& b) { return a >= b; })});
  r->Add({"And", 7, INT_MAX, {DType::kBool}, 0, Logical([](bool a, bool b) { return a && b; })});
  r->Add({"Or", 7, INT_MAX, {DType::kBool}, 0, Logical([](bool a, bool b) { return a || b; })});
  r->Add({"Xor", 7, INT_MAX, {DType::kBool}, 0, Logical([](bool a, bool b) { return a != b; })});
  r->Add({"BitShift", 11, INT_MAX, {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64}, 0, MakeBitShift});
  r->Add({"Where", 9, INT_MAX, AllTypes(), 1, MakeWhere});
}

}  // namespace tilebank::engine::kernels
