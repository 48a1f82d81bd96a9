// Linear algebra beyond MatMul: Einsum (any equation: ellipses, repeated labels, implicit output)
// and Det (LU with partial pivoting), computed in double (int64 for integer Einsums).
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

// One operand's labels, '.' expanded to the ellipsis labels (upper-case stand-ins '0'..'9').
Result<std::string> ExpandLabels(const KernelInfo& info, const std::string& term, int rank, int* ellipsis_rank) {
  const size_t dots = term.find("...");
  std::string labels = term;
  if (dots != std::string::npos) {
    const int named = static_cast<int>(term.size()) - 3;
    const int fill = rank - named;
    if (fill < 0 || fill > 10) return info.Bad("term '" + term + "' does not fit an input of rank " + std::to_string(rank));
    std::string stand_in;
    for (int k = 0; k < fill; ++k) stand_in += static_cast<char>('0' + (10 - fill + k));
    *ellipsis_rank = std::max(*ellipsis_rank, fill);
    labels = term.substr(0, dots) + stand_in + term.substr(dots + 3);
  }
  if (static_cast<int>(labels.size()) != rank) return info.Bad("term '" + term + "' has " + std::to_string(labels.size()) + " labels for an input of rank " + std::to_string(rank));
  return labels;
}

Result<std::unique_ptr<OpKernel>> MakeEinsum(const KernelInfo& info) {
  std::string equation = info.attrs.String("equation", "");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  return FunctionKernel([info, equation](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    std::vector<std::string> terms;
    for (size_t start = 0;;) {
      const size_t comma = lhs.find(',', start);
      terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (terms.size() != in.size()) return info.Bad("equation '" + equation + "' names " + std::to_string(terms.size()) + " inputs; the node has " + std::to_string(in.size()));
    int ellipsis_rank = 0;
    std::vector<std::string> labels;
    std::map<char, int64_t> dims;
    for (size_t t = 0; t < terms.size(); ++t) {
      auto l = ExpandLabels(info, terms[t], in[t]->rank(), &ellipsis_rank);
      if (!l.ok()) return l.status();
      for (size_t k = 0; k < l->size(); ++k) {
        const char c = (*l)[k];
        const int64_t d = in[t]->shape[k];
        auto [it, fresh] = dims.emplace(c, d);
        if (!fresh && it->second != d) {
          if (it->second == 1) it->second = d;  // ellipsis dims broadcast
          else if (d != 1) return info.Bad("label '" + std::string(1, c) + "' has sizes " + std::to_string(it->second) + " and " + std::to_string(d));
        }
      }
      labels.push_back(*l);
    }
    std::string ellipsis;
    for (int k = 0; k < ellipsis_rank; ++k) ellipsis += static_cast<char>('0' + (10 - ellipsis_rank + k));
    std::string output;
    if (arrow != std::string::npos) {
      output = equation.substr(arrow + 2);
      const size_t dots = output.find("...");
      if (dots != std::string::npos) output = output.substr(0, dots) + ellipsis + output.substr(dots + 3);
    } else {  // implicit: the ellipsis, then labels seen once, alphabetically
      std::map<char, int> seen;
      for (const auto& l : labels)
        for (char c : l) seen[c]++;
      output = ellipsis;
      for (auto [c, n] : seen)
        if (n == 1 && !(c >= '0' && c <= '9')) output += c;
    }
    std::string all = output;
    for (auto [c, d] : dims)
      if (output.find(c) == std::string::npos) all += c;
    std::vector<int64_t> all_dims, out_shape;
    for (char c : all) {
      if (!dims.count(c)) return info.Bad("output label '" + std::string(1, c) + "' is on no input");
      all_dims.push_back(dims[c]);
    }
    for (char c : output) out_shape.push_back(dims[c]);
    // Each input's offset for a full index: its dims' strides placed at their labels (0 where it broadcasts).
    std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(all.size(), 0));
    for (size_t t = 0; t < in.size(); ++t) {
      int64_t s = 1;
      for (size_t k = labels[t].size(); k-- > 0;) {
        if (in[t]->shape[k] != 1) strides[t][all.find(labels[t][k])] += s;
        s *= in[t]->shape[k];
      }
    }
    std::vector<std::vector<double>> values;
    for (const auto* t : in) values.push_back(AsDoubles(*t));
    std::vector<double> y(static_cast<size_t>(Tensor::NumElements(out_shape)), 0.0);
    const int64_t inner = Tensor::NumElements(std::vector<int64_t>(all_dims.begin() + output.size(), all_dims.end()));
    ForEachIndex(all_dims, [&](int64_t flat, const std::vector<int64_t>& at) {
      double product = 1;
      for (size_t t = 0; t < in.size(); ++t) {
        int64_t offset = 0;
        for (size_t k = 0; k < at.size(); ++k) offset += at[k] * strides[t][k];
        product *= values[t][offset];
      }
      y[flat / std::max<int64_t>(inner, 1)] += product;
    });
    (*out)[0] = FromDoubles(in[0]->dtype, out_shape, y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeDet(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2]) return info.Bad("takes square matrices [..., M, M], not " + ShapeText(x.shape));
    const int64_t M = x.shape.back(), count = M ? x.size() / (M * M) : 0;
    const std::vector<double> xv = AsDoubles(x);
    std::vector<double> det(count);
    for (int64_t b = 0; b < count; ++b) {
      std::vector<double> a(xv.begin() + b * M * M, xv.begin() + (b + 1) * M * M);
      double d = 1;
      for (int64_t col = 0; col < M && d != 0; ++col) {
        int64_t pivot = col;
        for (int64_t r = col + 1; r < M; ++r)
          if (std::abs(a[r * M + col]) > std::abs(a[pivot * M + col])) pivot = r;
        if (a[pivot * M + col] == 0) {
          d = 0;
          break;
        }
        if (pivot != col) {
          for (int64_t k = 0; k < M; ++k) std::swap(a[pivot * M + k], a[col * M + k]);
          d = -d;
        }
        d *= a[col * M + col];
        for (int64_t r = col + 1; r < M; ++r) {
          const double f = a[r * M + col] / a[col * M + col];
          for (int64_t k = col; k < M; ++k) a[r * M + k] -= f * a[col * M + k];
        }
      }
      det[b] = d;
    }
    (*out)[0] = FromDoubles(x.dtype, std::vector<int64_t>(x.shape.begin(), x.shape.end() - 2), det);
    return Status::Ok();
  });
}

}  // namespace

void RegisterLinalgKernels(KernelRegistry* r) {
  r->Add({"Einsum", 12, INT_MAX, NumericTypes(), 0, MakeEinsum});
  r->Add({"Det", 11, INT_MAX, FloatTypes(), 0, MakeDet});
}

}  // namespace tilebank::engine::kernels
