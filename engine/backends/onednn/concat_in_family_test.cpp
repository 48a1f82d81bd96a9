// The concat loop of a layout family (concat_in_family.h) against a plain row-major concat: along
// channels in channels-last (counts that leave partial vectors, an input of one channel) and in
// blocked layouts of whole blocks, along a spatial axis, two images, and enough floats that the
// threads split runs in the middle; a blocked concat of partial blocks is refused. The slice loop
// likewise against a row-major slice, and refusing a slice that starts inside a block.
#include "engine/backends/onednn/concat_in_family.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "engine/backends/onednn/family_test_support.h"
#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {
namespace {

// The row-major concat of `inputs` along `axis`.
std::vector<float> PlainConcat(const std::vector<std::vector<float>>& inputs, const std::vector<std::vector<int64_t>>& shapes, int64_t axis) {
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shapes[0][static_cast<size_t>(d)];
  std::vector<float> out;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int64_t chunk = Tensor::NumElements(shapes[i]) / outer;
      out.insert(out.end(), inputs[i].begin() + o * chunk, inputs[i].begin() + (o + 1) * chunk);
    }
  return out;
}

void CheckConcat(const std::string& family, const std::vector<std::vector<int64_t>>& shapes, int64_t axis) {
  CAPTURE(family);
  CAPTURE(axis);
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kConcat;
  op.inputs = shapes;
  op.axis = axis;
  op.output = shapes[0];
  op.output[static_cast<size_t>(axis)] = 0;
  for (const auto& s : shapes) op.output[static_cast<size_t>(axis)] += s[static_cast<size_t>(axis)];
  std::vector<dnnl::memory::desc> srcs;
  for (const auto& s : shapes) srcs.push_back(FamilyTagDesc(family, s));
  const dnnl::memory::desc dst = FamilyTagDesc(family, op.output);
  auto kernel = ConcatInFamily(op, srcs, dst);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());

  dnnl::stream stream(OneDnnCpuEngine());
  std::vector<std::vector<float>> plain_inputs;
  std::vector<dnnl::memory> family_inputs;
  std::vector<const float*> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<float> x(static_cast<size_t>(Tensor::NumElements(shapes[i])));
    if (x.empty()) {  // an empty input: nothing to move into the family
      plain_inputs.push_back(x);
      in.push_back(nullptr);
      continue;
    }
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(std::sin(0.1 * k + i) * 5);
    dnnl::memory plain(RowMajorDesc(shapes[i]), OneDnnCpuEngine(), x.data()), moved(srcs[i], OneDnnCpuEngine());
    std::memset(moved.get_data_handle(), 0, srcs[i].get_size());
    dnnl::reorder(plain, moved).execute(stream, plain, moved);
    plain_inputs.push_back(std::move(x));
    family_inputs.push_back(moved);
    in.push_back(static_cast<const float*>(moved.get_data_handle()));
  }
  stream.wait();
  dnnl::memory out(dst, OneDnnCpuEngine());
  std::memset(out.get_data_handle(), 0, dst.get_size());
  REQUIRE((*kernel)->RunDirect(in, static_cast<float*>(out.get_data_handle())).ok());
  std::vector<float> got(static_cast<size_t>(Tensor::NumElements(op.output)));
  dnnl::memory back(RowMajorDesc(op.output), OneDnnCpuEngine(), got.data());
  dnnl::reorder(out, back).execute(stream, out, back);
  stream.wait();
  CHECK(got == PlainConcat(plain_inputs, shapes, axis));
}

TEST_CASE("a concat in a layout family joins its inputs as a row-major concat does") {
  CheckConcat("channels-last", {{1, 5, 7, 9}, {1, 1, 7, 9}, {1, 19, 7, 9}}, 1);
  CheckConcat("channels-last", {{2, 64, 40, 30}, {2, 32, 40, 30}, {2, 3, 40, 30}}, 1);  // several chunks per thread
  CheckConcat("channels-last", {{2, 6, 3, 9}, {2, 6, 5, 9}}, 2);
  CheckConcat("channels-last", {{2, 0, 40, 30}, {2, 64, 40, 30}, {2, 0, 40, 30}}, 1);  // empty inputs first and last
  CheckConcat("blocked16", {{1, 32, 20, 20}, {1, 16, 20, 20}, {1, 48, 20, 20}}, 1);
  CheckConcat("blocked8", {{2, 8, 3, 5}, {2, 24, 3, 5}}, 1);
  CheckConcat("blocked16", {{1, 20, 4, 6}, {1, 20, 3, 6}}, 2);  // padded channels, joined along H
  CheckConcat("channels-last", {{1, 4, 2, 3, 3}, {1, 12, 2, 3, 3}}, 1);
}

TEST_CASE("a concat in a layout family refuses blocks it would split") {
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kConcat;
  op.inputs = {{1, 20, 4, 4}, {1, 12, 4, 4}};
  op.output = {1, 32, 4, 4};
  op.axis = 1;
  auto kernel = ConcatInFamily(op, {FamilyTagDesc("blocked16", op.inputs[0]), FamilyTagDesc("blocked16", op.inputs[1])}, FamilyTagDesc("blocked16", op.output));
  CHECK_FALSE(kernel.ok());
}

// `shape` sliced along `axis` from `offset`, `size` indices, moved into `family` and back, against
// the row-major slice.
void CheckSlice(const std::string& family, const std::vector<int64_t>& shape, size_t axis, int64_t offset, int64_t size) {
  CAPTURE(family);
  CAPTURE(axis);
  CAPTURE(offset);
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kSlice;
  op.inputs = {shape};
  op.output = shape;
  op.output[axis] = size;
  op.offsets.assign(shape.size(), 0);
  op.offsets[axis] = offset;
  const dnnl::memory::desc src = FamilyTagDesc(family, shape), dst = FamilyTagDesc(family, op.output);
  auto kernel = SliceInFamily(op, src, dst);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  std::vector<float> x(static_cast<size_t>(Tensor::NumElements(shape)));
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
  dnnl::stream stream(OneDnnCpuEngine());
  dnnl::memory plain(RowMajorDesc(shape), OneDnnCpuEngine(), x.data()), moved(src, OneDnnCpuEngine()), out(dst, OneDnnCpuEngine());
  dnnl::reorder(plain, moved).execute(stream, plain, moved);
  stream.wait();
  REQUIRE((*kernel)->RunDirect({static_cast<const float*>(moved.get_data_handle())}, static_cast<float*>(out.get_data_handle())).ok());
  std::vector<float> got(static_cast<size_t>(Tensor::NumElements(op.output)));
  dnnl::memory back(RowMajorDesc(op.output), OneDnnCpuEngine(), got.data());
  dnnl::reorder(out, back).execute(stream, out, back);
  stream.wait();
  // The row-major slice: outer runs of the input's axis span, the part from `offset`.
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<float> want;
  for (int64_t o = 0; o < outer; ++o) {
    const auto from = x.begin() + (o * shape[axis] + offset) * inner;
    want.insert(want.end(), from, from + size * inner);
  }
  CHECK(got == want);
}

TEST_CASE("a slice in a layout family takes its part as a row-major slice does, and refuses to start inside a block") {
  CheckSlice("channels-last", {1, 256, 32, 32}, 1, 64, 64);  // a ConvLSTM gate
  CheckSlice("channels-last", {2, 7, 5, 3}, 1, 2, 3);
  CheckSlice("channels-last", {2, 6, 5, 9}, 2, 1, 3);
  CheckSlice("blocked16", {2, 48, 6, 5}, 1, 16, 32);
  CheckSlice("blocked8", {1, 24, 40, 30}, 1, 8, 8);
  CheckSlice("blocked16", {1, 20, 6, 5}, 2, 2, 4);  // padded channels, sliced along H
  CheckSlice("channels-last", {1, 12, 2, 3, 3}, 1, 4, 8);
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kSlice;
  op.inputs = {{1, 32, 4, 4}};
  op.output = {1, 16, 4, 4};
  op.offsets = {0, 8, 0, 0};
  CHECK_FALSE(SliceInFamily(op, FamilyTagDesc("blocked16", op.inputs[0]), FamilyTagDesc("blocked16", op.output)).ok());
}

}  // namespace
}  // namespace tilebank::engine
