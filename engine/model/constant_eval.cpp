#include "engine/model/constant_eval.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

#include "engine/ops/reference.h"

namespace tilebank::engine::model {

namespace {

using Inputs = std::vector<const ConstTensor*>;
using Evaluator = std::function<Result<ConstTensor>(const Graph&, const Node&, const Inputs&)>;
using Type = ConstTensor::Type;

// Constants larger than this stay nodes the executor runs (a model's shape arithmetic is far
// smaller; a malformed model must not make the importer allocate without bound).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

Status Bad(const Node& n, const std::string& what) { return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + "): " + what); }

// Element counts past int64 or the folding limit.
bool TooLarge(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return true;
    if (d != 0 && n > kMaxFoldedElements / d) return true;
    n *= d;
  }
  return n > kMaxFoldedElements;
}

// int64 of a double, saturating: INT64_MAX (Slice's "to the end") survives a pass through double.
int64_t SaturatingInt(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// A constant of `shape` built element by element from a flat index function.
Result<ConstTensor> Generate(Type type, std::vector<int64_t> shape, const std::function<double(int64_t)>& at) {
  if (TooLarge(shape)) return Status::Refused("too large to fold");
  ConstTensor c;
  c.type = type;
  c.shape = std::move(shape);
  const int64_t n = c.size();
  if (type == Type::kFloat) {
    c.floats.resize(n);
    for (int64_t i = 0; i < n; ++i) c.floats[i] = static_cast<float>(at(i));
  } else {
    c.ints.resize(n);
    for (int64_t i = 0; i < n; ++i) c.ints[i] = SaturatingInt(at(i));
  }
  return c;
}

// Maps flat indices of a broadcast result to flat indices of one operand.
class Broadcast {
 public:
  Broadcast(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape)
      : out_(out_shape), out_strides_(RowMajorStrides(out_shape)), in_stride_(BroadcastStrides(in_shape, out_shape)) {}
  int64_t operator()(int64_t i) const {
    int64_t index = 0;
    for (size_t d = 0; d < out_.size(); ++d) index += ((i / out_strides_[d]) % out_[d]) * in_stride_[d];
    return index;
  }

 private:
  std::vector<int64_t> out_, out_strides_, in_stride_;
};

std::vector<int64_t> IntsOf(const ConstTensor& c) {
  if (c.type == Type::kInt) return c.ints;
  std::vector<int64_t> v(c.size());
  for (int64_t i = 0; i < c.size(); ++i) v[i] = SaturatingInt(c.floats[i]);
  return v;
}

Type Wider(const Inputs& in) {
  for (const auto* t : in)
    if (t && t->type == Type::kFloat) return Type::kFloat;
  return Type::kInt;
}

// Elementwise over numpy-broadcast operands; `result` is the output's type.
Result<ConstTensor> Elementwise(const Node& n, const Inputs& in, Type result, const std::function<double(const std::vector<double>&)>& f) {
  std::vector<int64_t> shape = in[0]->shape;
  for (size_t k = 1; k < in.size(); ++k)
    if (!BroadcastShapes(std::vector<int64_t>(shape), in[k]->shape, &shape)) return Bad(n, "inputs do not broadcast");
  std::vector<Broadcast> maps;
  for (const auto* t : in) maps.emplace_back(t->shape, shape);
  std::vector<double> args(in.size());
  return Generate(result, shape, [&](int64_t i) {
    for (size_t k = 0; k < in.size(); ++k) args[k] = in[k]->At(maps[k](i));
    return f(args);
  });
}

Evaluator Binary(std::function<double(double, double)> f) {
  return [f](const Graph&, const Node& n, const Inputs& in) {
    if (in.size() != 2) return Result<ConstTensor>(Bad(n, "takes two inputs"));
    return Elementwise(n, in, Wider(in), [&](const std::vector<double>& a) { return f(a[0], a[1]); });
  };
}
Evaluator Compare(std::function<bool(double, double)> f) {
  return [f](const Graph&, const Node& n, const Inputs& in) {
    if (in.size() != 2) return Result<ConstTensor>(Bad(n, "takes two inputs"));
    return Elementwise(n, in, Type::kInt, [&](const std::vector<double>& a) { return f(a[0], a[1]) ? 1.0 : 0.0; });
  };
}
Evaluator Unary(std::function<double(double)> f, bool keeps_type = true) {
  return [f, keeps_type](const Graph&, const Node& n, const Inputs& in) {
    return Elementwise(n, {in[0]}, keeps_type ? in[0]->type : Type::kFloat, [&](const std::vector<double>& a) { return f(a[0]); });
  };
}
Evaluator Variadic(std::function<double(double, double)> f) {
  return [f](const Graph&, const Node& n, const Inputs& in) {
    return Elementwise(n, in, Wider(in), [&](const std::vector<double>& a) {
      double r = a[0];
      for (size_t k = 1; k < a.size(); ++k) r = f(r, a[k]);
      return r;
    });
  };
}

// A copy of `c` with another shape of as many elements.
Result<ConstTensor> Reshaped(const Node& n, const ConstTensor& c, std::vector<int64_t> shape) {
  if (TooLarge(shape) || Tensor::NumElements(shape) != c.size()) return Bad(n, "the new shape does not hold the input's " + std::to_string(c.size()) + " elements");
  ConstTensor r = c;
  r.shape = std::move(shape);
  return r;
}

// Normalises axes of a tensor of `rank` into [0, rank), sorted and distinct.
Result<std::vector<int64_t>> Axes(const Node& n, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return Bad(n, "axis " + std::to_string(a) + " is outside a rank-" + std::to_string(rank) + " tensor");
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return Bad(n, "an axis is named twice");
  return axes;
}

Result<ConstTensor> ReshapeEval(const Graph& g, const Node& n, const Inputs& in) {
  if (in.size() < 2 || !in[1]) return Bad(n, "has no shape input");
  std::vector<int64_t> shape = IntsOf(*in[1]);
  const bool allow_zero = g.AttrInt(n, "allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (i >= in[0]->shape.size()) return Bad(n, "a 0 in the shape names a dimension the input lacks");
      shape[i] = in[0]->shape[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return Bad(n, "the shape has two -1");
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      return Bad(n, "the shape has a negative dimension");
    } else if (shape[i] != 0 && known <= kMaxFoldedElements) {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || in[0]->size() % known) return Bad(n, "the input's " + std::to_string(in[0]->size()) + " elements do not fill the shape");
    shape[infer] = in[0]->size() / known;
  }
  return Reshaped(n, *in[0], shape);
}

Result<ConstTensor> UnsqueezeEval(const Graph&, const Node& n, const Inputs& in) {
  if (in.size() < 2 || !in[1]) return Bad(n, "has no axes input");
  const int64_t rank = static_cast<int64_t>(in[0]->shape.size() + in[1]->size());
  auto axes = Axes(n, IntsOf(*in[1]), rank);
  if (!axes.ok()) return axes.status();
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(std::binary_search(axes->begin(), axes->end(), d) ? 1 : in[0]->shape[next++]);
  return Reshaped(n, *in[0], shape);
}

Result<ConstTensor> SqueezeEval(const Graph&, const Node& n, const Inputs& in) {
  const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
  std::vector<int64_t> axes;
  if (in.size() > 1 && in[1]) {
    auto a = Axes(n, IntsOf(*in[1]), rank);
    if (!a.ok()) return a.status();
    axes = *a;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      if (in[0]->shape[d] == 1) axes.push_back(d);
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    const bool squeezed = std::binary_search(axes.begin(), axes.end(), d);
    if (squeezed && in[0]->shape[d] != 1) return Bad(n, "squeezes dimension " + std::to_string(d) + ", which is not 1");
    if (!squeezed) shape.push_back(in[0]->shape[d]);
  }
  return Reshaped(n, *in[0], shape);
}

Result<ConstTensor> FlattenEval(const Graph& g, const Node& n, const Inputs& in) {
  const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
  int64_t axis = g.AttrInt(n, "axis", 1);
  if (axis < -rank || axis > rank) return Bad(n, "axis is outside the input's rank");
  if (axis < 0) axis += rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in[0]->shape[d];
  return Reshaped(n, *in[0], {outer, outer ? in[0]->size() / outer : 0});
}

Result<ConstTensor> ConstantOfShapeEval(const Graph& g, const Node& n, const Inputs& in) {
  // `value` (a one-element tensor, float 0 when absent) was read at import into value / value_is_float.
  const bool is_float = !n.attrs.contains("value") || n.attrs.value("value_is_float", true);
  const double value = g.AttrFloat(n, "value", 0.f);
  std::vector<int64_t> shape = IntsOf(*in[0]);
  for (int64_t d : shape)
    if (d < 0) return Bad(n, "the shape has a negative dimension");
  return Generate(is_float ? Type::kFloat : Type::kInt, shape, [value](int64_t) { return value; });
}

Result<ConstTensor> ExpandEval(const Graph&, const Node& n, const Inputs& in) {
  std::vector<int64_t> shape;
  if (!BroadcastShapes(in[0]->shape, IntsOf(*in[1]), &shape)) return Bad(n, "the shape does not broadcast with the input");
  const Broadcast map(in[0]->shape, shape);
  return Generate(in[0]->type, shape, [&](int64_t i) { return in[0]->At(map(i)); });
}

Result<ConstTensor> WhereEval(const Graph&, const Node& n, const Inputs& in) {
  if (in.size() != 3) return Bad(n, "takes three inputs");
  return Elementwise(n, in, Wider({in[1], in[2]}), [](const std::vector<double>& a) { return a[0] != 0 ? a[1] : a[2]; });
}

Result<ConstTensor> ConcatEval(const Graph& g, const Node& n, const Inputs& in) {
  const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
  int64_t axis = g.AttrInt(n, "axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return Bad(n, "axis is outside the inputs' rank");
  if (axis < 0) axis += rank;
  std::vector<int64_t> shape = in[0]->shape;
  shape[axis] = 0;
  for (const auto* t : in) {
    if (static_cast<int64_t>(t->shape.size()) != rank) return Bad(n, "inputs differ in rank");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && t->shape[d] != shape[d]) return Bad(n, "inputs differ off the concatenated axis");
    shape[axis] += t->shape[axis];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  if (TooLarge(shape)) return Status::Refused("too large to fold");
  std::vector<double> flat;
  flat.reserve(Tensor::NumElements(shape));
  for (int64_t o = 0; o < outer; ++o)
    for (const auto* t : in) {
      const int64_t chunk = t->shape[axis] * inner;
      for (int64_t k = 0; k < chunk; ++k) flat.push_back(t->At(o * chunk + k));
    }
  return Generate(Wider(in), shape, [&](int64_t i) { return flat[i]; });
}

Result<ConstTensor> GatherEval(const Graph& g, const Node& n, const Inputs& in) {
  const auto& data = *in[0];
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  int64_t axis = g.AttrInt(n, "axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return Bad(n, "axis is outside the data's rank");
  if (axis < 0) axis += rank;
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), in[1]->shape.begin(), in[1]->shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= data.shape[d];
  const int64_t extent = data.shape[axis], count = in[1]->size();
  std::vector<int64_t> indices = IntsOf(*in[1]);
  for (int64_t& index : indices) {  // ONNX: each index in [-extent, extent)
    if (index < -extent || index >= extent)
      return Bad(n, "index " + std::to_string(index) + " is outside [" + std::to_string(-extent) + ", " + std::to_string(extent) + ")");
    if (index < 0) index += extent;
  }
  return Generate(data.type, shape, [&](int64_t i) {
    const int64_t o = i / (count * inner), k = (i / inner) % count, r = i % inner;
    return data.At((o * extent + indices[k]) * inner + r);
  });
}

Result<ConstTensor> SliceEval(const Graph&, const Node& n, const Inputs& in) {
  const auto& data = *in[0];
  if (in.size() < 3 || !in[1] || !in[2]) return Bad(n, "needs starts and ends");
  const auto starts = IntsOf(*in[1]), ends = IntsOf(*in[2]);
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (in.size() > 3 && in[3]) axes = IntsOf(*in[3]);
  if (in.size() > 4 && in[4]) steps = IntsOf(*in[4]);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return Bad(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(rank, 0), step(rank, 1), shape = data.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return Bad(n, "axis " + std::to_string(axes[i]) + " is outside the data's rank");
    if (steps[i] == 0) return Bad(n, "a step is 0");
    const int64_t dim = data.shape[a];
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (steps[i] > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[a] = e > s ? (e - s + steps[i] - 1) / steps[i] : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[a] = s > e ? (s - e - steps[i] - 1) / -steps[i] : 0;
    }
    begin[a] = s;
    step[a] = steps[i];
  }
  const auto out_strides = RowMajorStrides(shape), in_strides = RowMajorStrides(data.shape);
  return Generate(data.type, shape, [&](int64_t i) {
    int64_t index = 0;
    for (int64_t d = 0; d < rank; ++d) index += (begin[d] + ((i / out_strides[d]) % shape[d]) * step[d]) * in_strides[d];
    return data.At(index);
  });
}

Result<ConstTensor> RangeEval(const Graph&, const Node& n, const Inputs& in) {
  if (in[0]->size() != 1 || in[1]->size() != 1 || in[2]->size() != 1) return Bad(n, "start, limit and delta must be scalars");
  const double start = in[0]->At(0), limit = in[1]->At(0), delta = in[2]->At(0);
  if (delta == 0) return Bad(n, "delta is 0");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > static_cast<double>(kMaxFoldedElements)) return Status::Refused("too large to fold");
  return Generate(Wider(in), {static_cast<int64_t>(count)}, [&](int64_t i) { return start + i * delta; });
}

Result<ConstTensor> TransposeEval(const Graph& g, const Node& n, const Inputs& in) {
  const auto& data = *in[0];
  const size_t rank = data.shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  perm = g.AttrInts(n, "perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < rank; ++i)
    if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) return Bad(n, "perm is not a permutation of the input's axes");
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) shape[d] = data.shape[perm[d]];
  const auto out_strides = RowMajorStrides(shape), in_strides = RowMajorStrides(data.shape);
  return Generate(data.type, shape, [&](int64_t i) {
    int64_t index = 0;
    for (size_t d = 0; d < rank; ++d) index += ((i / out_strides[d]) % shape[d]) * in_strides[perm[d]];
    return data.At(index);
  });
}

Result<ConstTensor> TileEval(const Graph&, const Node& n, const Inputs& in) {
  const auto& data = *in[0];
  const auto repeats = IntsOf(*in[1]);
  if (repeats.size() != data.shape.size()) return Bad(n, "repeats differ in length from the input's rank");
  std::vector<int64_t> shape = data.shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0) return Bad(n, "a repeat is negative");
    if (repeats[d] > kMaxFoldedElements) return Status::Refused("too large to fold");
    shape[d] *= repeats[d];
  }
  const auto out_strides = RowMajorStrides(shape), in_strides = RowMajorStrides(data.shape);
  return Generate(data.type, shape, [&](int64_t i) {
    int64_t index = 0;
    for (size_t d = 0; d < shape.size(); ++d) index += (((i / out_strides[d]) % shape[d]) % data.shape[d]) * in_strides[d];
    return data.At(index);
  });
}

Result<ConstTensor> TriluEval(const Graph& g, const Node& n, const Inputs& in) {
  const auto& data = *in[0];
  const size_t rank = data.shape.size();
  if (rank < 2) return Bad(n, "the input has rank below 2");
  const int64_t k = in.size() > 1 && in[1] && in[1]->size() > 0 ? SaturatingInt(in[1]->At(0)) : 0;
  const bool upper = g.AttrInt(n, "upper", 1) != 0;
  const int64_t rows = data.shape[rank - 2], cols = data.shape[rank - 1];
  return Generate(data.type, data.shape, [&](int64_t i) {
    const int64_t col = i % cols, row = (i / cols) % rows;
    const bool kept = upper ? col - row >= k : col - row <= k;
    return kept ? data.At(i) : 0.0;
  });
}

Result<ConstTensor> ScatterNDEval(const Graph& g, const Node& n, const Inputs& in) {
  if (g.AttrString(n, "reduction", "none") != "none") return Status::Refused("reductions are not folded");
  const auto& data = *in[0];
  const auto& indices = *in[1];
  if (indices.shape.empty()) return Bad(n, "indices are a scalar");
  const int64_t k = indices.shape.back(), rank = static_cast<int64_t>(data.shape.size());
  if (k < 1 || k > rank) return Bad(n, "the indices' last dimension exceeds the data's rank");
  int64_t slice = 1;
  for (int64_t d = k; d < rank; ++d) slice *= data.shape[d];
  const int64_t updates = indices.size() / k;
  if (in[2]->size() != updates * slice) return Bad(n, "updates do not match the indices");
  auto r = Generate(Wider({in[0], in[2]}), data.shape, [&](int64_t i) { return data.At(i); });
  if (!r.ok()) return r;
  const auto strides = RowMajorStrides(data.shape);
  for (int64_t u = 0; u < updates; ++u) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t index = SaturatingInt(indices.At(u * k + d));
      if (index < 0) index += data.shape[d];
      if (index < 0 || index >= data.shape[d]) return Bad(n, "an index is outside the data");
      offset += index * strides[d];
    }
    for (int64_t j = 0; j < slice; ++j) {
      const double v = in[2]->At(u * slice + j);
      if (r->type == Type::kFloat) r->floats[offset + j] = static_cast<float>(v);
      else r->ints[offset + j] = SaturatingInt(v);
    }
  }
  return r;
}

Result<ConstTensor> CastEval(const Graph& g, const Node& n, const Inputs& in) {
  const int64_t to = g.AttrInt(n, "to", 1);
  const bool to_float = to == 1 || to == 10 || to == 11 || to == 16;
  return Elementwise(n, {in[0]}, to_float ? Type::kFloat : Type::kInt,
                     [to, to_float](const std::vector<double>& a) { return to == 9 ? (a[0] != 0) : to_float ? a[0] : std::trunc(a[0]); });
}

Result<ConstTensor> ModEval(const Graph& g, const Node& n, const Inputs& in) {
  const bool fmod = g.AttrInt(n, "fmod", 0) != 0;
  return Binary([fmod](double a, double b) {
    if (b == 0) return 0.0;
    const double r = std::fmod(a, b);
    return fmod || r == 0 || (r < 0) == (b < 0) ? r : r + b;  // fmod 0: the divisor's sign
  })(g, n, in);
}

const std::map<std::string, Evaluator>& Evaluators() {
  static const std::map<std::string, Evaluator> evaluators = {
      {"Add", Binary([](double a, double b) { return a + b; })},
      {"Sub", Binary([](double a, double b) { return a - b; })},
      {"Mul", Binary([](double a, double b) { return a * b; })},
      {"Div", [](const Graph& g, const Node& n, const Inputs& in) {
         const bool ints = Wider(in) == Type::kInt;
         return Binary([ints](double a, double b) { return ints ? (b == 0 ? 0.0 : std::trunc(a / b)) : a / b; })(g, n, in);
       }},
      {"Mod", ModEval},
      {"Pow", Binary([](double a, double b) { return std::pow(a, b); })},
      {"Min", Variadic([](double a, double b) { return std::min(a, b); })},
      {"Max", Variadic([](double a, double b) { return std::max(a, b); })},
      {"Equal", Compare([](double a, double b) { return a == b; })},
      {"Less", Compare([](double a, double b) { return a < b; })},
      {"LessOrEqual", Compare([](double a, double b) { return a <= b; })},
      {"Greater", Compare([](double a, double b) { return a > b; })},
      {"GreaterOrEqual", Compare([](double a, double b) { return a >= b; })},
      {"And", Compare([](double a, double b) { return a != 0 && b != 0; })},
      {"Or", Compare([](double a, double b) { return a != 0 || b != 0; })},
      {"Xor", Compare([](double a, double b) { return (a != 0) != (b != 0); })},
      {"Not", [](const Graph&, const Node& n, const Inputs& in) {
         return Elementwise(n, {in[0]}, Type::kInt, [](const std::vector<double>& a) { return a[0] == 0 ? 1.0 : 0.0; });
       }},
      {"Sqrt", Unary([](double a) { return std::sqrt(a); }, false)},
      {"Exp", Unary([](double a) { return std::exp(a); }, false)},
      {"Log", Unary([](double a) { return std::log(a); }, false)},
      {"Reciprocal", Unary([](double a) { return 1.0 / a; }, false)},
      {"Neg", Unary([](double a) { return -a; })},
      {"Abs", Unary([](double a) { return std::fabs(a); })},
      {"Floor", Unary([](double a) { return std::floor(a); })},
      {"Ceil", Unary([](double a) { return std::ceil(a); })},
      {"Sign", Unary([](double a) { return static_cast<double>((a > 0) - (a < 0)); })},
      {"Cast", CastEval},
      {"Identity", [](const Graph&, const Node&, const Inputs& in) { return Result<ConstTensor>(*in[0]); }},
      {"Reshape", ReshapeEval},
      {"Unsqueeze", UnsqueezeEval},
      {"Squeeze", SqueezeEval},
      {"Flatten", FlattenEval},
      {"ConstantOfShape", ConstantOfShapeEval},
      {"Expand", ExpandEval},
      {"Where", WhereEval},
      {"Concat", ConcatEval},
      {"Gather", GatherEval},
      {"Slice", SliceEval},
      {"Range", RangeEval},
      {"Transpose", TransposeEval},
      {"Tile", TileEval},
      {"Trilu", TriluEval},
      {"ScatterND", ScatterNDEval},
  };
  return evaluators;
}

// Inputs an op needs; only Slice's axes (3) may be left out before an input given.
size_t RequiredInputs(const std::string& op_type) {
  static const std::map<std::string, size_t> required = {
      {"Reshape", 2}, {"Unsqueeze", 2}, {"Expand", 2}, {"Gather", 2}, {"Tile", 2}, {"Slice", 3}, {"Where", 3}, {"Range", 3}, {"ScatterND", 3}};
  auto it = required.find(op_type);
  if (it != required.end()) return it->second;
  static const std::vector<std::string> unary = {"Not", "Sqrt", "Exp", "Log", "Reciprocal", "Neg", "Abs", "Floor", "Ceil", "Sign", "Cast", "Identity",
                                                 "Squeeze", "Flatten", "ConstantOfShape", "Transpose", "Trilu", "Min", "Max", "Concat"};
  return std::find(unary.begin(), unary.end(), op_type) != unary.end() ? 1 : 2;
}

// Whether every input the evaluator reads is there.
bool InputsPresent(const Node& n, const Inputs& in) {
  if (in.size() < RequiredInputs(n.op_type)) return false;
  for (size_t k = 0; k < in.size(); ++k)
    if (!in[k] && !(n.op_type == "Slice" && k == 3) && !(n.op_type == "Trilu" && k == 1) && !(n.op_type == "Squeeze" && k == 1)) return false;
  return true;
}

// The ONNX element type of a folded output.
std::string FoldedDtype(const Graph& g, const Node& n, const ConstTensor& c) {
  static const std::vector<std::string> boolean = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not"};
  if (std::find(boolean.begin(), boolean.end(), n.op_type) != boolean.end()) return "bool";
  const std::string& declared = g.values[n.outputs[0]].dtype;
  if (!declared.empty() && declared.rfind("type ", 0) != 0) return declared;
  return c.type == Type::kFloat ? "float32" : "int64";
}

}  // namespace

bool CanEvaluate(const std::string& op_type) { return op_type == "Shape" || Evaluators().count(op_type) > 0; }

Result<int> EvaluateConstantNodes(Graph* g, std::vector<bool>* shape_known) {
  shape_known->resize(g->values.size(), true);
  int folded = 0;
  std::vector<Node> kept;
  for (Node& n : g->nodes) {
    const bool single_output = n.outputs.size() == 1 && n.outputs[0] >= 0;
    if (single_output && n.op_type == "Shape" && !n.inputs.empty() && n.inputs[0] >= 0 && (*shape_known)[n.inputs[0]]) {
      const auto& shape = g->values[n.inputs[0]].shape;
      const int64_t rank = static_cast<int64_t>(shape.size());
      int64_t start = g->AttrInt(n, "start", 0), end = g->AttrInt(n, "end", rank);
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
      std::vector<int64_t> dims(shape.begin() + start, shape.begin() + std::max(start, end));
      Value& out = g->values[n.outputs[0]];
      out.constant = ConstTensor::Ints({static_cast<int64_t>(dims.size())}, dims);
      out.shape = out.constant->shape;
      out.dtype = "int64";
      (*shape_known)[n.outputs[0]] = true;
      ++folded;
      continue;
    }
    auto evaluator = Evaluators().find(n.op_type);
    bool all_constant = evaluator != Evaluators().end() && single_output && !n.inputs.empty() && n.inputs[0] >= 0;
    Inputs in;
    for (int v : n.inputs) {
      if (v >= 0 && !g->IsConstant(v)) all_constant = false;
      in.push_back(v >= 0 && g->IsConstant(v) ? &*g->values[v].constant : nullptr);
    }
    while (!in.empty() && !in.back()) in.pop_back();  // optional inputs left out at the end
    if (all_constant && InputsPresent(n, in)) {
      auto c = evaluator->second(*g, n, in);
      if (!c.ok() && c.status().code() != StatusCode::kRefused) return c.status();
      if (c.ok()) {
        Value& out = g->values[n.outputs[0]];
        if ((*shape_known)[n.outputs[0]] && out.shape != c->shape)
          return Bad(n, "the folded value's shape disagrees with its inferred shape");
        out.dtype = FoldedDtype(*g, n, *c);
        out.shape = c->shape;
        out.constant = std::move(c.value());
        (*shape_known)[n.outputs[0]] = true;
        ++folded;
        continue;
      }
    }
    kept.push_back(std::move(n));
  }
  g->nodes = std::move(kept);
  return folded;
}

}  // namespace tilebank::engine::model
