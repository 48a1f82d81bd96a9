// The layout family's Resize loop (resize_in_family.h) against plain loops over the same taps on
// row-major data: linear under align_corners, half_pixel and asymmetric (up and down), nearest
// with its rounding modes, over one, two and three spatial axes, from a single position, channels-last
// and blocked by 8 and 16 (20 channels: the last block padded, its padding written 0).
#include "engine/backends/onednn/resize_in_family.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "engine/backends/onednn/family_test_support.h"

namespace tilebank::engine {
namespace {

// The families of the layout plan's kernels, by family_test_support.h's names.
const char* const kFamilies[] = {"channels-last", "blocked8", "blocked16"};

// Resizes x (row-major `in`) to `out` with `taps` (per spatial axis) in plain loops: the corners of
// every blending axis weighed in double.
std::vector<double> Expected(const std::vector<float>& x, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                             const std::vector<std::vector<ResizeTap>>& taps) {
  const size_t spatial = in.size() - 2;
  std::vector<double> y(static_cast<size_t>(Tensor::NumElements(out)));
  std::vector<int64_t> in_strides(in.size(), 1);
  for (size_t d = in.size() - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * in[d];
  for (size_t i = 0; i < y.size(); ++i) {
    std::vector<int64_t> o(out.size());
    for (size_t d = out.size(), rest = i; d-- > 0;) o[d] = static_cast<int64_t>(rest % out[d]), rest /= out[d];
    double sum = 0;
    for (uint32_t corner = 0; corner < (1u << spatial); ++corner) {
      double weight = 1;
      int64_t at = o[0] * in_strides[0] + o[1] * in_strides[1];
      for (size_t k = 0; k < spatial; ++k) {
        const ResizeTap& t = taps[k][o[2 + k]];
        const bool high = (corner >> k) & 1u;
        weight *= high ? t.w : 1.0 - t.w;
        at += (high ? t.hi : t.lo) * in_strides[2 + k];
      }
      if (weight != 0) sum += weight * x[at];
    }
    y[i] = sum;
  }
  return y;
}

void CheckResize(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::string& mode, const std::string& transform,
                 const std::string& nearest_mode = "round_prefer_floor") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kResize;
  op.inputs = {in};
  op.output = out;
  for (size_t d = 2; d < in.size(); ++d) op.taps.push_back(ResizeAxisTaps(in[d], out[d], 0.0, mode, transform, nearest_mode));
  std::vector<float> x(static_cast<size_t>(Tensor::NumElements(in)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 3 + (i % 7) * 0.25);
  const std::vector<double> want = Expected(x, in, out, op.taps);
  int64_t spatial = 1;
  for (size_t d = 2; d < out.size(); ++d) spatial *= out[d];
  for (const char* family : kFamilies) {
    CAPTURE(family);
    // The input moved into the family (padding 0, as the kernels before it write it), the output
    // (first 1234 throughout) moved back.
    const dnnl::memory::desc src = FamilyTagDesc(family, in), dst = FamilyTagDesc(family, out);
    auto kernel = ResizeInFamily(op, src, dst);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    const dnnl::memory src_memory = MovedInto(src, in, x);
    dnnl::memory dst_memory(dst, OneDnnCpuEngine());
    dnnl::stream stream(OneDnnCpuEngine());
    FamilyRun run;
    run.raw.assign(dst.get_size() / sizeof(float), 1234.f);
    std::memcpy(dst_memory.get_data_handle(), run.raw.data(), dst.get_size());
    REQUIRE((*kernel)->RunDirect({static_cast<const float*>(src_memory.get_data_handle())}, static_cast<float*>(dst_memory.get_data_handle())).ok());
    std::memcpy(run.raw.data(), dst_memory.get_data_handle(), dst.get_size());
    run.output.assign(want.size(), 0.f);
    dnnl::memory back(RowMajorDesc(out), OneDnnCpuEngine(), run.output.data());
    dnnl::reorder(dst_memory, back).execute(stream, dst_memory, back);
    stream.wait();
    CHECK(PaddingIsZero(run, family, out[0], out[1], spatial));
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(run.output[i] - want[i]));
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("a resize in a layout family blends what the row-major resize blends") {
  SUBCASE("bilinear, align_corners, by two") { CheckResize({2, 20, 5, 7}, {2, 20, 10, 14}, "linear", "align_corners"); }
  SUBCASE("bilinear, half_pixel, by an odd ratio") { CheckResize({1, 20, 5, 7}, {1, 20, 9, 13}, "linear", "half_pixel"); }
  SUBCASE("bilinear, pytorch_half_pixel, down") { CheckResize({1, 20, 8, 9}, {1, 20, 3, 4}, "linear", "pytorch_half_pixel"); }
  SUBCASE("linear along the width only") { CheckResize({1, 20, 4, 5}, {1, 20, 4, 11}, "linear", "asymmetric"); }
  SUBCASE("nearest, half_pixel, round_prefer_floor") { CheckResize({2, 20, 5, 7}, {2, 20, 8, 11}, "nearest", "half_pixel"); }
  SUBCASE("nearest, asymmetric, ceil") { CheckResize({1, 20, 5, 7}, {1, 20, 12, 9}, "nearest", "asymmetric", "ceil"); }
  SUBCASE("linear over one axis") { CheckResize({2, 20, 9}, {2, 20, 17}, "linear", "half_pixel"); }
  SUBCASE("trilinear, two images") { CheckResize({2, 20, 3, 4, 5}, {2, 20, 6, 8, 10}, "linear", "align_corners"); }
  SUBCASE("bilinear from one position (an image pooling branch)") { CheckResize({2, 32, 1, 1}, {2, 32, 4, 5}, "linear", "half_pixel"); }
  SUBCASE("half_pixel keeps an axis of the same size a copy") { CheckResize({1, 20, 6, 5}, {1, 20, 6, 9}, "linear", "half_pixel"); }
  SUBCASE("linear over height and depth, not width") { CheckResize({1, 20, 3, 4, 5}, {1, 20, 5, 7, 5}, "linear", "half_pixel"); }
}

TEST_CASE("a resize in a layout family refuses what its loop cannot do") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kResize;
  op.inputs = {{1, 20, 4, 4}};
  op.output = {1, 20, 8, 8};
  const dnnl::memory::desc src = FamilyTagDesc("channels-last", op.inputs[0]), dst = FamilyTagDesc("channels-last", op.output);
  CHECK_FALSE(ResizeInFamily(op, src, dst).ok());  // no taps
  op.taps = {ResizeAxisTaps(4, 8, 0, "linear", "half_pixel", ""), ResizeAxisTaps(4, 8, 0, "linear", "half_pixel", "")};
  CHECK(ResizeInFamily(op, src, dst).ok());
  op.taps[1][3].hi = 4;  // past the input
  CHECK_FALSE(ResizeInFamily(op, src, dst).ok());
  op.taps[1][3].hi = 3;
  CHECK_FALSE(ResizeInFamily(op, src, FamilyTagDesc("blocked16", op.output)).ok());  // two blockings
}

}  // namespace
}  // namespace tilebank::engine
