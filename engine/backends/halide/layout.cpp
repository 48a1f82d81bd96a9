#include "engine/backends/halide/layout.h"

#include <cstring>

#include "engine/backends/halide/huge_pages.h"

namespace tilebank::engine {

Layout4d ParseLayout4d(const std::string& name) {
  if (name == "NHWC") return Layout4d::kNHWC;
  if (name == "NCHWc") return Layout4d::kNCHWc;
  return Layout4d::kNCHW;
}

Halide::Buffer<float> ToHalide(const Tensor& t) {
  std::vector<int> extents;
  for (int i = t.rank() - 1; i >= 0; --i) extents.push_back(static_cast<int>(t.shape[i]));
  if (extents.empty()) extents.push_back(1);
  return ToHalideAs(t, extents);
}

Halide::Buffer<float> ToHalideAs(const Tensor& t, const std::vector<int>& extents) {
  Halide::Buffer<float> b(LargeBuffer(extents));
  std::memcpy(b.data(), t.data.data(), t.data.size() * sizeof(float));
  return b;
}

std::function<Halide::Buffer<float>(const Tensor&)> AsExtents(std::vector<int> extents) {
  return [extents = std::move(extents)](const Tensor& t) { return ToHalideAs(t, extents); };
}

void FromHalide(const Halide::Buffer<float>& b, const std::vector<int64_t>& shape, Tensor* out) {
  *out = Tensor(shape);
  // Buffers realized by Halide are dense in their own dimension order.
  std::memcpy(out->data.data(), b.data(), out->data.size() * sizeof(float));
}

Halide::Buffer<float> ToLayout(const Tensor& t, Layout4d layout, int block) {
  const int N = static_cast<int>(t.shape[0]), C = static_cast<int>(t.shape[1]), H = static_cast<int>(t.shape[2]),
            W = static_cast<int>(t.shape[3]);
  auto at = [&](int n, int c, int h, int w) { return t.data[((static_cast<size_t>(n) * C + c) * H + h) * W + w]; };
  if (layout == Layout4d::kNCHW) return ToHalide(t);
  if (layout == Layout4d::kNHWC) {
    Halide::Buffer<float> b(LargeBuffer({C, W, H, N}));
    for (int n = 0; n < N; ++n)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w)
          for (int c = 0; c < C; ++c) b(c, w, h, n) = at(n, c, h, w);
    return b;
  }
  const int blocks = (C + block - 1) / block;
  Halide::Buffer<float> b(LargeBuffer({block, W, H, blocks, N}));
  b.fill(0.f);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w) b(c % block, w, h, c / block, n) = at(n, c, h, w);
  return b;
}

void FromLayout(const Halide::Buffer<float>& b, Layout4d layout, int block, const std::vector<int64_t>& shape, Tensor* out) {
  if (layout == Layout4d::kNCHW) return FromHalide(b, shape, out);
  *out = Tensor(shape);
  const int N = static_cast<int>(shape[0]), C = static_cast<int>(shape[1]), H = static_cast<int>(shape[2]),
            W = static_cast<int>(shape[3]);
  float* o = out->data.data();
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w)
          *o++ = layout == Layout4d::kNHWC ? b(c, w, h, n) : b(c % block, w, h, c / block, n);
}

}  // namespace tilebank::engine
