// The channel-gather loop of a layout family (channel_gather_in_family.h) against a plain loop on
// row-major data: a shuffle of all 20 channels (4 groups of 5) and a pick of 12 with repeats,
// channels-last and blocked by 8 and 16 (the last block padded, its padding written 0); indices out
// of the input's channels are refused.
#include "engine/backends/onednn/channel_gather_in_family.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/family_test_support.h"

namespace tilebank::engine {
namespace {

const std::vector<int64_t> kShape = {2, 20, 3, 5};
constexpr int64_t N = 2, C = 20, S = 15;

TEST_CASE("a gather of channels in a layout family computes the row-major result") {
  std::vector<float> x(static_cast<size_t>(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i) * 3 + (i % 7) * 0.25);
  std::vector<int64_t> shuffle;
  for (int64_t j = 0; j < C; ++j) shuffle.push_back(j % 4 * 5 + j / 4);
  const std::vector<std::vector<int64_t>> picks = {shuffle, {19, 0, 3, 3, 8, 16, 17, 1, 2, 9, 9, 4}};
  for (const std::vector<int64_t>& channels : picks) {
    CAPTURE(channels.size());
    LayoutFamilyOp op;
    op.kind = LayoutFamilyOp::Kind::kChannelGather;
    op.inputs = {kShape};
    op.output = {N, static_cast<int64_t>(channels.size()), 3, 5};
    op.channels = channels;
    for (const char* family : {"nhwc", "nChw8c", "nChw16c"}) {
      CAPTURE(family);
      const auto src = DescOfHandover(LayoutInFamily(family, kShape), kShape);
      const auto dst = DescOfHandover(LayoutInFamily(family, op.output), op.output);
      REQUIRE(src);
      REQUIRE(dst);
      auto kernel = ChannelGatherInFamily(op, *src, *dst);
      REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
      const FamilyRun run = RunInFamily(**kernel, family, kShape, x, {}, false, false, op.output);
      const int64_t out_c = op.output[1];
      CHECK(PaddingIsZero(run, family, N, out_c, S));
      int wrong = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < out_c; ++j)
          for (int64_t s = 0; s < S; ++s)
            wrong += run.output[static_cast<size_t>((n * out_c + j) * S + s)] != x[static_cast<size_t>((n * C + channels[static_cast<size_t>(j)]) * S + s)];
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("a channel gather refuses indices out of its input's channels") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kChannelGather;
  op.inputs = {kShape};
  op.output = {N, 2, 3, 5};
  const auto src = DescOfHandover(LayoutInFamily("nhwc", kShape), kShape);
  const auto dst = DescOfHandover(LayoutInFamily("nhwc", op.output), op.output);
  REQUIRE(src);
  REQUIRE(dst);
  op.channels = {0, 20};
  CHECK_FALSE(ChannelGatherInFamily(op, *src, *dst).ok());
  op.channels = {0, -1};
  CHECK_FALSE(ChannelGatherInFamily(op, *src, *dst).ok());
  op.channels = {0, 1, 2};  // not the output's channels
  CHECK_FALSE(ChannelGatherInFamily(op, *src, *dst).ok());
}

}  // namespace
}  // namespace tilebank::engine
