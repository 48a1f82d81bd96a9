// Ops over a dimension or two: Softmax, LogSoftmax and Hardmax (along an axis), LpNormalization,
// MatMul and Gemm (every numeric type in the reference; float32 also on oneDNN's sgemm, where the
// tuned kernels do not run them: shapes known at run time, subgraphs) and TopK.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/backends/onednn/row_major_sgemm.h"
#include "engine/backends/simd/matrix_vector_rows.h"
#include "engine/kernels/elementwise.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

enum class RowOp { kSoftmax, kLogSoftmax, kHardmax, kLpNorm };

// f over each 1-D line along `axis`: lines of `dim` elements `inner` apart.
KernelFactory AlongAxis(RowOp op) {
  return [op](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([op, info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      const TypedTensor& x = *in[0];
      if (!IsFloating(x.dtype)) return info.Bad("takes a floating-point input");
      auto axis = Axis(info.attrs.Int("axis", -1), std::max(x.rank(), 1));
      if (!axis) return info.Bad("axis outside the input's rank");
      int64_t inner = 1;
      for (int64_t k = *axis + 1; k < x.rank(); ++k) inner *= x.shape[k];
      const int64_t dim = x.rank() ? x.shape[*axis] : 1, outer = dim && inner ? x.size() / (dim * inner) : 0;
      const int64_t p = info.attrs.Int("p", 2);
      TypedTensor y(x.dtype, x.shape);
      std::vector<double> line(dim);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          for (int64_t a = 0; a < dim; ++a) line[a] = x.At((o * dim + a) * inner + i);
          const double top = dim ? *std::max_element(line.begin(), line.end()) : 0;
          double sum = 0;
          if (op == RowOp::kLpNorm)
            for (double v : line) sum += p == 1 ? std::abs(v) : v * v;
          else
            for (double v : line) sum += std::exp(v - top);
          const int64_t first_max = dim ? std::max_element(line.begin(), line.end()) - line.begin() : 0;
          for (int64_t a = 0; a < dim; ++a) {
            double v = 0;
            switch (op) {
              case RowOp::kSoftmax: v = std::exp(line[a] - top) / sum; break;
              case RowOp::kLogSoftmax: v = line[a] - top - std::log(sum); break;
              case RowOp::kHardmax: v = a == first_max ? 1 : 0; break;
              case RowOp::kLpNorm: v = sum > 0 ? line[a] / (p == 1 ? sum : std::sqrt(sum)) : 0; break;
            }
            y.SetAt((o * dim + a) * inner + i, v);
          }
        }
      (*out)[0] = std::move(y);
      return Status::Ok();
    });
  };
}

// Products this small (a capsule network's 16x8 by 8x1, 23040 of them) cost less computed here than
// one library call's dispatch each.
constexpr int64_t kSmallProduct = 4096;

// C[bt] = A[bt] B[bt] for every batch of the broadcast `batch` shape, in float, the batches on the
// threads; each sum in k order (a matrix by a vector: in vectors of k, MatrixVectorRows). The batch dimensions A broadcasts over run innermost, so that the
// products reading one A matrix run together and A, the larger operand where B is a vector per
// batch (the capsule transforms: 5.9 MB, shared by both images), comes from memory once.
void SmallProducts(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K, const std::vector<std::vector<int64_t>>& operand_batches,
                   const std::vector<int64_t>& batch) {
  const size_t rank = batch.size();
  // Per batch dimension, in the order walked: its extent and the matrices A, B and C step by.
  struct Dim {
    int64_t extent, a, b, c;
  };
  std::vector<Dim> dims(rank);
  int64_t c_stride = 1;
  for (size_t d = rank; d-- > 0;) {
    auto stride = [&](const std::vector<int64_t>& shape) {
      const size_t offset = rank - shape.size();
      if (d < offset || shape[d - offset] == 1) return int64_t{0};
      int64_t s = 1;
      for (size_t j = d - offset + 1; j < shape.size(); ++j) s *= shape[j];
      return s;
    };
    dims[d] = {batch[d], stride(operand_batches[0]), stride(operand_batches[1]), c_stride};
    c_stride *= batch[d];
  }
  std::stable_partition(dims.begin(), dims.end(), [](const Dim& d) { return d.a != 0 || d.extent == 1; });
  const int64_t batches = c_stride, work = std::max<int64_t>(1, M * N * K);
  ParallelFor(batches, std::max<int64_t>(1, kElementwiseGrain / work), [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      int64_t a_at = 0, b_at = 0, c_at = 0;
      for (size_t d = rank, rest = static_cast<size_t>(bt); d-- > 0;) {
        const int64_t i = static_cast<int64_t>(rest) % dims[d].extent;
        rest /= static_cast<size_t>(dims[d].extent);
        a_at += i * dims[d].a, b_at += i * dims[d].b, c_at += i * dims[d].c;
      }
      const float* a = A + a_at * M * K;
      const float* b = B + b_at * K * N;
      float* c = C + c_at * M * N;
      if (N == 1) {
        MatrixVectorRows(a, M, K, b, c);
        continue;
      }
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          float sum = 0.f;
          for (int64_t k = 0; k < K; ++k) sum += a[m * K + k] * b[k * N + n];
          c[m * N + n] = sum;
        }
    }
  });
}

// numpy matmul: 1-D operands promoted and their dimension removed, batch dimensions broadcast.
// `sgemm`: float32 products on oneDNN's sgemm (tiny ones in many batches: SmallProducts); otherwise
// (the reference) each row summed in Acc (double for floating types) in k order.
Result<std::unique_ptr<OpKernel>> MakeMatMulKernel(const KernelInfo& info, bool sgemm) {
  return FunctionKernel([info, sgemm](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() != 2 || !in[0] || !in[1] || in[0]->dtype != in[1]->dtype) return info.Bad("takes two inputs of one type");
    std::vector<int64_t> a = in[0]->shape, b = in[1]->shape;
    if (a.empty() || b.empty()) return info.Bad("takes inputs of rank 1 or more");
    const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K) return info.Bad("inner dimensions " + std::to_string(K) + " and " + std::to_string(b[b.size() - 2]) + " differ");
    std::vector<int64_t> batch;
    if (!BroadcastShapes({std::vector<int64_t>(a.begin(), a.end() - 2), std::vector<int64_t>(b.begin(), b.end() - 2)}, &batch))
      return info.Bad("batch dimensions do not broadcast");
    std::vector<int64_t> shape = batch;
    if (!a_vector) shape.push_back(M);
    if (!b_vector) shape.push_back(N);
    TypedTensor y(in[0]->dtype, shape);
    BroadcastWalk walk({std::vector<int64_t>(a.begin(), a.end() - 2), std::vector<int64_t>(b.begin(), b.end() - 2)}, batch);
    const int64_t batches = Tensor::NumElements(batch);
    Status status = Status::Ok();
    VisitNumeric(
        in[0]->dtype,
        [&](auto tag) {
          using T = decltype(tag);
          using Acc = std::conditional_t<kIsFloat<T>, double, int64_t>;
          const T *A = in[0]->data<T>(), *B = in[1]->data<T>();
          T* C = y.data<T>();
          if constexpr (std::is_same_v<T, float>) {
            if (sgemm && batches > 1 && M * N * K <= kSmallProduct) {
              SmallProducts(A, B, C, M, N, K, {std::vector<int64_t>(a.begin(), a.end() - 2), std::vector<int64_t>(b.begin(), b.end() - 2)}, batch);
              return;
            }
          }
          for (int64_t bt = 0; bt < batches; ++bt, walk.Next()) {
            const T* a_mat = A + walk.offset(0) * M * K;
            const T* b_mat = B + walk.offset(1) * K * N;
            T* c_mat = C + bt * M * N;
            if constexpr (std::is_same_v<T, float>) {
              if (sgemm && M > 0 && N > 0 && K > 0) {
                RowMajorSgemm('N', 'N', M, N, K, 1.0f, a_mat, K, b_mat, N, 0.0f, c_mat, N);
                continue;
              }
            }
            std::vector<Acc> row(static_cast<size_t>(N));  // B read along its rows: the order that streams memory
            for (int64_t m = 0; m < M; ++m) {
              std::fill(row.begin(), row.end(), Acc(0));
              for (int64_t k = 0; k < K; ++k) {
                const Acc a = static_cast<Acc>(static_cast<Calc<T>>(a_mat[m * K + k]));
                const T* b_row = b_mat + k * N;
                for (int64_t n = 0; n < N; ++n) row[n] += a * static_cast<Acc>(static_cast<Calc<T>>(b_row[n]));
              }
              for (int64_t n = 0; n < N; ++n) c_mat[m * N + n] = Store<T>(row[n]);
            }
          }
        },
        [&] { status = info.Bad(DTypeName(in[0]->dtype) + " is not a numeric type"); });
    if (!status.ok()) return status;
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

// Gemm: alpha * A' * B' + beta * C, A' and B' transposed by transA / transB, C broadcast to [M, N].
// `sgemm`: float32 on oneDNN's sgemm; otherwise (the reference) in double.
Result<std::unique_ptr<OpKernel>> MakeGemmKernel(const KernelInfo& info, bool sgemm) {
  return FunctionKernel([info, sgemm](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->rank() != 2 || in[1]->rank() != 2) return info.Bad("takes 2-D A and B");
    const bool ta = info.attrs.Int("transA", 0) != 0, tb = info.attrs.Int("transB", 0) != 0;
    const double alpha = info.attrs.Float("alpha", 1.0f), beta = info.attrs.Float("beta", 1.0f);
    const TypedTensor &a = *in[0], &b = *in[1];
    const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1], N = tb ? b.shape[0] : b.shape[1];
    if ((tb ? b.shape[1] : b.shape[0]) != K) return info.Bad("A " + ShapeText(a.shape) + " and B " + ShapeText(b.shape) + " do not multiply");
    const bool with_c = in.size() > 2 && in[2] && beta != 0;
    if (with_c) {
      std::vector<int64_t> shape;
      if (!BroadcastShapes({in[2]->shape, {M, N}}, &shape) || shape != std::vector<int64_t>{M, N})
        return info.Bad("C " + ShapeText(in[2]->shape) + " does not broadcast to " + ShapeText({M, N}));
    }
    if (sgemm && a.dtype == DType::kFloat32 && b.dtype == DType::kFloat32 && (!with_c || in[2]->dtype == DType::kFloat32) && M > 0 && N > 0 &&
        K > 0) {  // onto beta * C, laid out in float rows
      TypedTensor c(DType::kFloat32, {M, N});
      float* cp = c.data<float>();
      if (with_c) {
        const BroadcastRows rows({in[2]->shape}, {M, N});
        const float* cv = in[2]->data<float>();
        const float scale = static_cast<float>(beta);
        for (int64_t r = 0; r < rows.rows(); ++r) {
          const float* from = cv + rows.RowStart(0, r);
          float* to = cp + r * rows.inner();
          for (int64_t k = 0; k < rows.inner(); ++k) to[k] = scale * from[rows.step(0) ? k : 0];
        }
      }
      RowMajorSgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, static_cast<float>(alpha), a.data<float>(), ta ? M : K, b.data<float>(), tb ? K : N,
                 with_c ? 1.0f : 0.0f, cp, N);
      (*out)[0] = std::move(c);
      return Status::Ok();
    }
    std::vector<double> y(static_cast<size_t>(M * N), 0.0);
    if (with_c) {
      BroadcastWalk walk({in[2]->shape}, {M, N});
      for (int64_t i = 0; i < M * N; ++i, walk.Next()) y[i] = beta * in[2]->At(walk.offset(0));
    }
    const std::vector<double> av = AsDoubles(a), bv = AsDoubles(b);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += av[ta ? k * M + m : m * K + k] * bv[tb ? n * K + k : k * N + n];
        y[m * N + n] += alpha * acc;
      }
    (*out)[0] = FromDoubles(a.dtype, {M, N}, y);
    return Status::Ok();
  });
}

// TopK: values and int64 indices of the k largest (or smallest) along an axis; ties keep the lower index.
Result<std::unique_ptr<OpKernel>> MakeTopK(const KernelInfo& info) {
  const bool largest = info.attrs.Int("largest", 1) != 0, sorted = info.attrs.Int("sorted", 1) != 0;
  return FunctionKernel([info, largest, sorted](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (in.size() < 2 || !in[1] || in[1]->size() != 1) return info.Bad("takes k as a one-element tensor");
    auto axis = Axis(info.attrs.Int("axis", -1), x.rank());
    if (!axis) return info.Bad("axis outside the input's rank");
    const int64_t k = in[1]->IntAt(0), dim = x.shape[*axis];
    if (k < 0 || k > dim) return info.Bad("k = " + std::to_string(k) + " is outside 0.." + std::to_string(dim));
    int64_t inner = 1;
    for (int64_t d = *axis + 1; d < x.rank(); ++d) inner *= x.shape[d];
    const int64_t outer = dim && inner ? x.size() / (dim * inner) : 0;
    std::vector<int64_t> shape = x.shape;
    shape[*axis] = k;
    TypedTensor values(x.dtype, shape), indices(DType::kInt64, shape);
    std::vector<int64_t> order(dim);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t a) { return (o * dim + a) * inner + i; };
        TopKOrder(k, largest, sorted, [&](int64_t a) { return x.At(at(a)); }, &order);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t to = (o * k + j) * inner + i;
          CopyElement(x, at(order[j]), &values, to);
          indices.data<int64_t>()[to] = order[j];
        }
      }
    (*out)[0] = std::move(values);
    if (out->size() > 1) (*out)[1] = std::move(indices);
    return Status::Ok();
  });
}

}  // namespace

void RegisterMathKernels(KernelRegistry* r) {
  r->Add({"Softmax", 13, INT_MAX, FloatTypes(), 0, AlongAxis(RowOp::kSoftmax)});
  r->Add({"LogSoftmax", 13, INT_MAX, FloatTypes(), 0, AlongAxis(RowOp::kLogSoftmax)});
  r->Add({"Hardmax", 13, INT_MAX, FloatTypes(), 0, AlongAxis(RowOp::kHardmax)});
  r->Add({"LpNormalization", 1, INT_MAX, FloatTypes(), 0, AlongAxis(RowOp::kLpNorm)});
  r->Add({"MatMul", 1, INT_MAX, NumericTypes(), 0, [](const KernelInfo& info) { return MakeMatMulKernel(info, false); }});
  r->Add({"MatMul", 1, INT_MAX, {DType::kFloat32}, 0, [](const KernelInfo& info) { return MakeMatMulKernel(info, true); }, false, "onednn"});
  r->Add({"Gemm", 1, INT_MAX, NumericTypes(), 0, [](const KernelInfo& info) { return MakeGemmKernel(info, false); }});
  r->Add({"Gemm", 1, INT_MAX, {DType::kFloat32}, 0, [](const KernelInfo& info) { return MakeGemmKernel(info, true); }, false, "onednn"});
  r->Add({"TopK", 10, INT_MAX, NumericTypes(), 0, MakeTopK});
}

}  // namespace tilebank::engine::kernels
