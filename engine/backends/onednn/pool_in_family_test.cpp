// The pool loop of a layout family (pool_in_family.h) against plain loops on row-major data: max
// and average (padding counted or not), 1-D, 2-D and 3-D windows with strides, pads and ceil_mode's
// partial windows, channels-last and blocked layouts with a padded last block; dilated windows are
// refused.
#include "engine/backends/onednn/pool_in_family.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/backends/onednn/family_test_support.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/pool_test_support.h"

namespace tilebank::engine {
namespace {

void CheckPool(const Pool& p) {
  CAPTURE(p.type);
  CAPTURE(p.in.size());
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kPool;
  op.pool = SpecOf(p);
  op.inputs = {p.in};
  op.output = OutShape(p);
  std::vector<float> x(static_cast<size_t>(Tensor::NumElements(p.in)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.61 * i) * 4 + (i % 7) * 0.3);
  const std::vector<float> want = PlainPool(p, x);
  for (const char* family : {"channels-last", "blocked16", "blocked8"}) {
    CAPTURE(family);
    const auto src = FamilyTagDesc(family, p.in), dst = FamilyTagDesc(family, op.output);
    auto kernel = PoolInFamily(op, src, dst);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    dnnl::stream stream(OneDnnCpuEngine());
    dnnl::memory plain(RowMajorDesc(p.in), OneDnnCpuEngine(), x.data()), in(src, OneDnnCpuEngine()), out(dst, OneDnnCpuEngine());
    std::memset(in.get_data_handle(), 0, src.get_size());
    std::memset(out.get_data_handle(), 0x7f, dst.get_size());  // padding channels must come back 0
    dnnl::reorder(plain, in).execute(stream, plain, in);
    stream.wait();
    REQUIRE((*kernel)->RunDirect({static_cast<const float*>(in.get_data_handle())}, static_cast<float*>(out.get_data_handle())).ok());
    const float* raw = static_cast<const float*>(out.get_data_handle());
    bool padding_zero = true;  // every float of the output is a value or a zero of the padding
    for (size_t i = 0; i < dst.get_size() / sizeof(float); ++i) padding_zero &= std::isfinite(raw[i]) && std::fabs(raw[i]) < 1e6f;
    CHECK(padding_zero);
    std::vector<float> got(want.size());
    dnnl::memory back(RowMajorDesc(op.output), OneDnnCpuEngine(), got.data());
    dnnl::reorder(out, back).execute(stream, out, back);
    stream.wait();
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(want[i] - got[i])));
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("a pool in a layout family computes ONNX's MaxPool and AveragePool") {
  for (const char* type : {"MaxPool", "AveragePool"}) {
    CheckPool({type, {1, 20, 28, 28}, {3, 3}, {1, 1}, {1, 1, 1, 1}});           // GoogLeNet's branch pools
    CheckPool({type, {2, 64, 17, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, true});  // a stem's, ceil_mode
    CheckPool({type, {1, 7, 9, 11}, {2, 3}, {2, 1}, {0, 1, 1, 0}});
    CheckPool({type, {1, 33, 50}, {3}, {2}, {1, 1}});                          // 1-D
    CheckPool({type, {1, 9, 5, 6, 7}, {2, 3, 3}, {2, 1, 2}, {0, 1, 1, 1, 1, 1}});  // 3-D
  }
  CheckPool({"AveragePool", {1, 20, 12, 12}, {3, 3}, {1, 1}, {1, 1, 1, 1}, true});  // the padding counted
}

TEST_CASE("a pool in a layout family refuses dilated windows") {
  Pool p{"MaxPool", {1, 8, 10, 10}, {3, 3}, {1, 1}, {0, 0, 0, 0}};
  LayoutFamilyOp op;
  op.kind = LayoutFamilyOp::Kind::kPool;
  op.pool = SpecOf(p);
  op.pool.attrs["dilations"] = std::vector<int64_t>{2, 2};
  op.pool.outputs[0].shape = {1, 8, 6, 6};
  op.inputs = {p.in};
  op.output = {1, 8, 6, 6};
  CHECK_FALSE(PoolInFamily(op, FamilyTagDesc("channels-last", p.in), FamilyTagDesc("channels-last", op.output)).ok());
}

}  // namespace
}  // namespace tilebank::engine
