#include "engine/backends/onednn/packed_transposed_gemm.h"

#include <dnnl.hpp>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {
namespace {

using dnnl::memory;

class OneDnnPackedTransposedGemm : public PackedTransposedGemm {
 public:
  OneDnnPackedTransposedGemm(const dnnl::matmul::primitive_desc& pd, memory packed, const memory::desc& x_t, const memory::desc& z_t,
                             const memory::desc& z)
      : matmul_(pd), packed_(std::move(packed)), x_t_(x_t, OneDnnCpuEngine(), nullptr), z_t_(z_t, OneDnnCpuEngine(), nullptr),
        z_(z, OneDnnCpuEngine(), nullptr), transpose_(z_t_, z_), stream_(OneDnnCpuEngine()) {}

  void Run(const float* x, float* z, float* scratch) override {
    x_t_.set_data_handle(const_cast<float*>(x));
    z_t_.set_data_handle(scratch);
    z_.set_data_handle(z);
    matmul_.execute(stream_, {{DNNL_ARG_SRC, x_t_}, {DNNL_ARG_WEIGHTS, packed_}, {DNNL_ARG_DST, z_t_}});
    transpose_.execute(stream_, z_t_, z_);
    stream_.wait();
  }

 private:
  dnnl::matmul matmul_;
  memory packed_, x_t_, z_t_, z_;
  dnnl::reorder transpose_;
  dnnl::stream stream_;
};

}  // namespace

Result<std::unique_ptr<PackedTransposedGemm>> PackedTransposedGemm::Make(int64_t C, int64_t rows, int64_t positions, const float* w) {
  try {
    const auto f32 = memory::data_type::f32;
    // X [C, positions] row-major read as X^T [positions, C]; the result [positions, rows], then Z.
    const memory::desc x_t({positions, C}, f32, memory::dims{1, positions});
    const memory::desc w_any({C, rows}, f32, memory::format_tag::any), w_plain({C, rows}, f32, memory::format_tag::ab);
    const memory::desc z_t({positions, rows}, f32, memory::format_tag::ab), z({positions, rows}, f32, memory::dims{1, positions});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_t, w_any, z_t), OneDnnCpuEngine());
    if (IsReferenceImplementation(pd)) return Status::InvalidInput("oneDNN has only its reference matmul for this product");
    memory packed(pd.weights_desc(), OneDnnCpuEngine());
    memory plain(w_plain, OneDnnCpuEngine(), const_cast<float*>(w));
    dnnl::stream stream(OneDnnCpuEngine());
    dnnl::reorder(plain, packed).execute(stream, plain, packed);
    stream.wait();
    return std::unique_ptr<PackedTransposedGemm>(new OneDnnPackedTransposedGemm(pd, std::move(packed), x_t, pd.dst_desc(), z));
  } catch (const dnnl::error& e) {
    return Status::InvalidInput(std::string("oneDNN: ") + e.what());
  }
}

}  // namespace tilebank::engine
