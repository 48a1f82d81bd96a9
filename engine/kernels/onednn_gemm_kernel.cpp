#include "engine/kernels/onednn_gemm_kernel.h"

#include <map>
#include <tuple>
#include <mutex>
#include <utility>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/kernels/fused_activation.h"

namespace tilebank::engine::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

class OneDnnFusedGemm : public OpKernel {
 public:
  OneDnnFusedGemm(KernelInfo info, std::unique_ptr<OpKernel> fallback) : info_(std::move(info)), fallback_(std::move(fallback)) {
    trans_b_ = info_.attrs.Int("transB", 0) != 0;
    activation_ = info_.attrs.String("activation", "");
    b_constant_ = info_.IsConstantInput(1);
  }

  Status Compute(const KernelInputs& in, std::vector<TypedTensor>* out) const override {
    if (!Takes(in)) return fallback_->Compute(in, out);
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = CatchOneDnnErrors([&]() -> Status { return Run(in, out); });
    return s.ok() ? s : fallback_->Compute(in, out);
  }

 private:
  struct Rows {
    dnnl::matmul prim;
    memory::desc weights;
  };
  struct Packed {
    memory::desc layout;
    const void* from = nullptr;  // B's memory it was reordered from
    memory weights;
  };

  const TypedTensor* Bias(const KernelInputs& in) const { return in.size() > 2 ? in[2] : nullptr; }

  bool Takes(const KernelInputs& in) const {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->dtype != DType::kFloat32 || in[1]->dtype != DType::kFloat32) return false;
    if (in[0]->rank() < 1 || in[1]->rank() != 2) return false;
    const int64_t K = in[0]->shape.back(), N = in[1]->shape[trans_b_ ? 0 : 1];
    if (in[1]->shape[trans_b_ ? 1 : 0] != K || K == 0 || N == 0) return false;
    const TypedTensor* bias = Bias(in);
    return !bias || (bias->dtype == DType::kFloat32 && bias->size() == N && bias->rank() >= 1 && bias->shape.back() == N);
  }

  dnnl::primitive_attr Attr() const {
    dnnl::post_ops ops;
    AppendFusedActivation(activation_, &ops);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    return attr;
  }

  // The primitive for M rows of K times B [K, N] (made once per shape), B packed for it when the graph holds B.
  const Rows& PrimitiveFor(int64_t M, int64_t K, int64_t N, bool bias) const {
    const std::tuple<int64_t, int64_t, int64_t, bool> shape{M, K, N, bias};
    auto it = rows_.find(shape);
    if (it != rows_.end()) return it->second;
    if (rows_.size() >= kMaxRowCounts) rows_.clear();  // a bound on what inputs of many sizes keep
    const memory::desc a({M, K}, memory::data_type::f32, tag::ab), c({M, N}, memory::data_type::f32, tag::ab),
        w({K, N}, memory::data_type::f32, b_constant_ ? tag::any : (trans_b_ ? tag::ba : tag::ab)), bias_md({1, N}, memory::data_type::f32, tag::ab);
    const dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(a, w, bias_md, c) : dnnl::matmul::desc(a, w, c);
    const dnnl::matmul::primitive_desc pd(desc, Attr(), OneDnnCpuEngine());
    return rows_.emplace(shape, Rows{dnnl::matmul(pd), pd.weights_desc()}).first->second;
  }

  // B in layout `md`: reordered once per layout and B's memory while the graph holds B.
  memory PackedWeights(const TypedTensor& b, const memory::desc& md, int64_t K, int64_t N, dnnl::stream& stream) const {
    memory user({{K, N}, memory::data_type::f32, trans_b_ ? tag::ba : tag::ab}, OneDnnCpuEngine(), const_cast<std::byte*>(b.bytes.data()));
    if (!b_constant_) return user;
    for (const Packed& p : packed_)
      if (p.layout == md && p.from == b.bytes.data()) return p.weights;
    memory packed(md, OneDnnCpuEngine());
    dnnl::reorder(user, packed).execute(stream, user, packed);
    stream.wait();
    packed_.push_back(Packed{md, b.bytes.data(), packed});
    return packed;
  }

  Status Run(const KernelInputs& in, std::vector<TypedTensor>* out) const {
    const TypedTensor &a = *in[0], &b = *in[1];
    const int64_t K = a.shape.back(), N = b.shape[trans_b_ ? 0 : 1], M = a.size() / K;
    std::vector<int64_t> shape(a.shape.begin(), a.shape.end() - 1);
    shape.push_back(N);
    TypedTensor& y = (*out)[0];
    ReshapeForOverwrite(&y, DType::kFloat32, shape);  // last run's buffer: nothing allocated or cleared
    if (M > 0) {
      dnnl::engine& engine = OneDnnCpuEngine();
      dnnl::stream stream(engine);
      const TypedTensor* bias = Bias(in);
      const Rows& rows = PrimitiveFor(M, K, N, bias != nullptr);
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, memory({{M, K}, memory::data_type::f32, tag::ab}, engine, const_cast<std::byte*>(a.bytes.data()))},
          {DNNL_ARG_WEIGHTS, PackedWeights(b, rows.weights, K, N, stream)},
          {DNNL_ARG_DST, memory({{M, N}, memory::data_type::f32, tag::ab}, engine, y.bytes.data())}};
      if (bias) args[DNNL_ARG_BIAS] = memory({{1, N}, memory::data_type::f32, tag::ab}, engine, const_cast<std::byte*>(bias->bytes.data()));
      ExecuteAndWait(rows.prim, stream, args);
    }
    return Status::Ok();
  }

  static constexpr size_t kMaxRowCounts = 256;
  KernelInfo info_;
  std::unique_ptr<OpKernel> fallback_;
  bool trans_b_ = false, b_constant_ = false;
  std::string activation_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int64_t, int64_t, int64_t, bool>, Rows> rows_;  // by M, K, N and bias
  mutable std::vector<Packed> packed_;
};

}  // namespace

std::unique_ptr<OpKernel> MakeOneDnnFusedGemm(const KernelInfo& info, std::unique_ptr<OpKernel> fallback) {
  return std::make_unique<OneDnnFusedGemm>(info, std::move(fallback));
}

}  // namespace tilebank::engine::kernels
