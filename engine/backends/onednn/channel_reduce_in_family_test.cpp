// The channel reduction of a layout family (channel_reduce_in_family.h) against plain loops on
// row-major data: ReduceMean, ReduceSum and ReduceMax over the channels of two images,
// channels-last and blocked by 8 and 16 (20 channels: the last block padded, its padding not
// counted), written row-major one value per position.
#include "engine/backends/onednn/channel_reduce_in_family.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/family_test_support.h"

namespace tilebank::engine {
namespace {

TEST_CASE("a reduction over channels in a layout family folds each position's channels, row-major out") {
  const std::vector<int64_t> shape = {2, 20, 3, 5};
  constexpr int64_t N = 2, C = 20, S = 15;
  std::vector<float> x(static_cast<size_t>(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 3 - (i % 7) * 0.25);  // negative too: the max
  for (const char* type : {"ReduceMean", "ReduceSum", "ReduceMax"}) {
    CAPTURE(type);
    LayoutFamilyOp op;
    op.kind = LayoutFamilyOp::Kind::kChannelReduce;
    op.op_type = type;
    op.inputs = {shape};
    op.output = {N, 1, 3, 5};
    const std::string t = type;
    for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
      CAPTURE(family);
      const auto md = DescOfHandover(LayoutInFamily(family, shape), shape);
      REQUIRE(md);
      auto kernel = ChannelReduceInFamily(op, *md);
      REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
      const dnnl::memory in = MovedInto(*md, shape, x);
      std::vector<float> y(static_cast<size_t>(N * S), 1234.f);
      REQUIRE((*kernel)->RunDirect({static_cast<const float*>(in.get_data_handle())}, y.data()).ok());
      double worst = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) {
          double sum = 0, max = -INFINITY;
          for (int64_t c = 0; c < C; ++c) {
            const double v = x[static_cast<size_t>((n * C + c) * S + s)];
            sum += v, max = std::max(max, v);
          }
          const double want = t == "ReduceMean" ? sum / C : t == "ReduceSum" ? sum : max;
          worst = std::max(worst, std::fabs(y[static_cast<size_t>(n * S + s)] - want));
        }
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("a max over channels in a layout family is NaN where a channel is, in any block") {
  const std::vector<int64_t> shape = {1, 20, 1, 3};
  std::vector<float> x(60, 1.f);
  x[5 * 3 + 0] = NAN;   // channel 5 of position 0: the first block
  x[18 * 3 + 2] = NAN;  // channel 18 of position 2: the last, padded block
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kChannelReduce;
  op.op_type = "ReduceMax";
  op.inputs = {shape};
  op.output = {1, 1, 1, 3};
  for (const char* family : {"channels-last", "blocked8", "blocked16"}) {
    CAPTURE(family);
    const dnnl::memory::desc md = FamilyTagDesc(family, shape);
    auto kernel = ChannelReduceInFamily(op, md);
    REQUIRE(kernel.ok());
    const dnnl::memory in = MovedInto(md, shape, x);
    std::vector<float> y(3, 0.f);
    REQUIRE((*kernel)->RunDirect({static_cast<const float*>(in.get_data_handle())}, y.data()).ok());
    CHECK(std::isnan(y[0]));
    CHECK(y[1] == 1.f);
    CHECK(std::isnan(y[2]));
  }
}

TEST_CASE("a reduction over channels in a layout family refuses what it cannot do") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kChannelReduce;
  op.inputs = {{1, 20, 3, 5}};
  op.output = {1, 1, 3, 5};
  const auto md = DescOfHandover(LayoutInFamily("nhwc", op.inputs[0]), op.inputs[0]);
  REQUIRE(md);
  op.op_type = "ReduceProd";
  CHECK_FALSE(ChannelReduceInFamily(op, *md).ok());
  op.op_type = "ReduceMean";
  op.output = {1, 20, 1, 1};  // over the spatial axes: a global pool
  CHECK_FALSE(ChannelReduceInFamily(op, *md).ok());
  op.inputs = {{1, 4, 2, 2}};  // as many channels as positions
  op.output = {1, 4, 1, 1};
  const auto square = DescOfHandover(LayoutInFamily("nhwc", op.inputs[0]), op.inputs[0]);
  REQUIRE(square);
  CHECK_FALSE(ChannelReduceInFamily(op, *square).ok());
  op.output = {1, 2, 2};  // dims dropped: taken
  CHECK(ChannelReduceInFamily(op, *square).ok());
}

}  // namespace
}  // namespace tilebank::engine
