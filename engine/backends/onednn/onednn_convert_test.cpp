// A convolution under impl.onednn's "convert" layout takes the layouts its neighbours hand over
// (here NHWC) and computes what the model's own kernel computes in NCHW; a handed-over layout's key
// names the descriptor it came from.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/backends/library_impls.h"
#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {
namespace {

using dnnl::memory;

TEST_CASE("oneDNN layouts: a handed-over layout's key gives back its descriptor") {
  for (auto tag : {memory::format_tag::nhwc, memory::format_tag::nChw16c, memory::format_tag::nChw8c}) {
    const memory::desc md({1, 24, 5, 7}, memory::data_type::f32, tag);
    const HandoverLayout layout = HandoverLayoutOf(md);
    REQUIRE(!layout.row_major());
    auto back = DescOfHandover(layout, {1, 24, 5, 7});
    REQUIRE(back.has_value());
    CHECK(*back == md);
    CHECK(!DescOfHandover(layout, {1, 24, 5, 8}).has_value());  // another shape
  }
  // bf16: a key of its own (the same layout in float32 is another tensor), half the memory, and
  // never row-major, even dense.
  for (auto tag : {memory::format_tag::nhwc, memory::format_tag::nchw}) {
    const memory::desc md({1, 24, 5, 7}, memory::data_type::bf16, tag);
    const HandoverLayout layout = HandoverLayoutOf(md), wide = HandoverLayoutOf(WithF32(md));
    REQUIRE(!layout.row_major());
    CHECK(layout.key != wide.key);
    CHECK(layout.floats == (24 * 5 * 7 + 1) / 2);
    CHECK(layout.name.find("bf16") != std::string::npos);
    auto back = DescOfHandover(layout, {1, 24, 5, 7});
    REQUIRE(back.has_value());
    CHECK(*back == md);
  }
  CHECK(*DescOfHandover(HandoverLayout{}, {2, 3}) == RowMajorDesc({2, 3}));
  CHECK(!DescOfHandover(HandoverLayout{"halide:x", "x", 6}, {2, 3}).has_value());
}

TEST_CASE("impl.onednn layout=convert: a convolution reading and writing NHWC computes what the NCHW one does") {
  auto op = ParseOpSpec(nlohmann::json::parse(R"({"op":"Conv","input_desc":[{"shape":[1,16,9,9],"type":"float32"},{"shape":[16,16,3,3],"type":"float32"}],
      "output_desc":[{"shape":[1,16,9,9],"type":"float32"}],"attr":[{"name":"pads","type":"list_int","value":[1,1,1,1]}]})"), 0);
  REQUIRE(op.ok());
  const OpTemplate& onednn = OneDnnImpl();
  Policy convert = onednn.DefaultPolicy(*op);
  for (Knob& k : convert)
    if (k.name == "layout") k.value = std::string("convert");
  Tensor x({1, 16, 9, 9}), w({16, 16, 3, 3});
  for (int64_t i = 0; i < x.size(); ++i) x.data[i] = static_cast<float>((i * 7) % 13) / 13.f - 0.5f;
  for (int64_t i = 0; i < w.size(); ++i) w.data[i] = static_cast<float>((i * 5) % 11) / 11.f - 0.5f;
  const std::vector<std::vector<int64_t>> shapes = {x.shape, w.shape};

  auto plain = onednn.Build(*op, onednn.DefaultPolicy(*op));
  REQUIRE(plain.ok());
  REQUIRE((*plain)->BindDirect(shapes, {nullptr, &w}).value());
  Tensor want({1, 16, 9, 9});
  REQUIRE((*plain)->RunDirect({x.data.data(), nullptr}, want.data.data()).ok());

  auto kernel = onednn.Build(*op, convert);
  REQUIRE(kernel.ok());
  REQUIRE((*kernel)->BindDirect(shapes, {nullptr, &w}).value());
  CHECK((*kernel)->ConvertsLayouts());
  CHECK((*kernel)->NativeLayout(0).row_major());  // it asks nothing of its neighbours
  const HandoverLayout nhwc = HandoverLayoutOf(memory::desc({1, 16, 9, 9}, memory::data_type::f32, memory::format_tag::nhwc));
  REQUIRE((*kernel)->UseGivenLayouts({nhwc, HandoverLayout{}}, nhwc).ok());
  // x in NHWC in, the result in NHWC out.
  auto to_nhwc = [](const Tensor& t) {
    Tensor out(t.shape);
    const int64_t C = t.shape[1], H = t.shape[2], W = t.shape[3];
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t v = 0; v < W; ++v) out.data[(h * W + v) * C + c] = t.data[(c * H + h) * W + v];
    return out;
  };
  const Tensor x_nhwc = to_nhwc(x), want_nhwc = to_nhwc(want);
  Tensor got({1, 16, 9, 9});
  REQUIRE((*kernel)->RunDirect({x_nhwc.data.data(), nullptr}, got.data.data()).ok());
  double worst = 0;
  for (int64_t i = 0; i < got.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(got.data[i] - want_nhwc.data[i])));
  CHECK(worst < 1e-4);
}

}  // namespace
}  // namespace tilebank::engine
