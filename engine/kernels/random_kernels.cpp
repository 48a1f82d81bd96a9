// Ops that draw random numbers: Dropout (identity unless training_mode, then a seeded mask),
// Bernoulli, RandomUniform(Like) and RandomNormal(Like). Draws come from std::mt19937_64 seeded
// by the `seed` attribute (a fixed default otherwise), so a run repeats; they do not reproduce
// numpy's or another runtime's streams.
#include <atomic>
#include <random>

#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/tensor_index.h"

namespace tilebank::engine::kernels {
namespace {

std::atomic<int64_t> draws{0};

// A node's generator; `values` is how many it is about to draw.
std::mt19937_64 Generator(const KernelInfo& info, int64_t values) {
  draws += values;
  return std::mt19937_64(info.attrs.Has("seed") ? static_cast<uint64_t>(info.attrs.Float("seed", 0.0f)) : 0x7469'6c65'6261'6e6bULL);
}

Result<std::unique_ptr<OpKernel>> MakeDropout(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    const double ratio = in.size() > 1 && in[1] ? in[1]->At(0) : info.attrs.Float("ratio", 0.5f);
    const bool training = in.size() > 2 && in[2] && in[2]->At(0) != 0;
    TypedTensor mask(DType::kBool, x.shape);
    for (int64_t i = 0; i < mask.size(); ++i) mask.SetAt(i, 1);
    if (!training || ratio == 0) {
      (*out)[0] = x;
    } else {
      if (ratio < 0 || ratio >= 1) return info.Bad("ratio must be in [0, 1)");
      auto generator = Generator(info, x.size());
      std::bernoulli_distribution keep(1 - ratio);
      std::vector<double> y = AsDoubles(x);
      for (int64_t i = 0; i < x.size(); ++i) {
        const bool kept = keep(generator);
        mask.SetAt(i, kept);
        y[i] = kept ? y[i] / (1 - ratio) : 0.0;
      }
      (*out)[0] = FromDoubles(x.dtype, x.shape, y);
    }
    if (out->size() > 1) (*out)[1] = std::move(mask);
    return Status::Ok();
  });
}

// Draws for RandomUniform/RandomNormal (shape from the attribute) and their Like forms (shape and,
// unless `dtype` is given, type from the input).
KernelFactory Random(bool normal, bool like) {
  return [normal, like](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
    return FunctionKernel([info, normal, like](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
      const std::vector<int64_t> shape = like ? in[0]->shape : info.attrs.Ints("shape");
      const DType dtype = info.attrs.Has("dtype") ? DTypeOfOnnx(static_cast<int>(info.attrs.Int("dtype", 1))) : like ? in[0]->dtype : DType::kFloat32;
      if (!IsFloating(dtype)) return info.Bad("draws floating-point values only");
      auto generator = Generator(info, Tensor::NumElements(shape));
      std::vector<double> v(static_cast<size_t>(Tensor::NumElements(shape)));
      if (normal) {
        std::normal_distribution<double> draw(info.attrs.Float("mean", 0.0f), info.attrs.Float("scale", 1.0f));
        for (double& x : v) x = draw(generator);
      } else {
        std::uniform_real_distribution<double> draw(info.attrs.Float("low", 0.0f), info.attrs.Float("high", 1.0f));
        for (double& x : v) x = draw(generator);
      }
      (*out)[0] = FromDoubles(dtype, shape, v);
      return Status::Ok();
    });
  };
}

Result<std::unique_ptr<OpKernel>> MakeBernoulli(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& p = *in[0];
    const DType dtype = info.attrs.Has("dtype") ? DTypeOfOnnx(static_cast<int>(info.attrs.Int("dtype", 1))) : p.dtype;
    auto generator = Generator(info, p.size());
    std::uniform_real_distribution<double> draw(0.0, 1.0);
    TypedTensor y(dtype, p.shape);
    for (int64_t i = 0; i < p.size(); ++i) y.SetAt(i, draw(generator) < p.At(i) ? 1 : 0);
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

}  // namespace

int64_t RandomDraws() { return draws.load(); }

void RegisterRandomKernels(KernelRegistry* r) {
  r->Add({"Dropout", 1, INT_MAX, FloatTypes(), 0, MakeDropout});
  r->Add({"RandomUniform", 1, INT_MAX, {}, 0, Random(false, false)});
  r->Add({"RandomNormal", 1, INT_MAX, {}, 0, Random(true, false)});
  r->Add({"RandomUniformLike", 1, INT_MAX, {}, 0, Random(false, true)});
  r->Add({"RandomNormalLike", 1, INT_MAX, {}, 0, Random(true, true)});
  r->Add({"Bernoulli", 15, INT_MAX, FloatTypes(), 0, MakeBernoulli});
}

}  // namespace tilebank::engine::kernels
