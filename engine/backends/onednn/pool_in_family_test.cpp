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

namespace tilebank::engine {
namespace {

struct Pool {
  std::string type;
  std::vector<int64_t> in, kernel, strides, pads;
  bool include_pad = false, ceil = false;
};

std::vector<int64_t> OutShape(const Pool& p) {
  std::vector<int64_t> out = {p.in[0], p.in[1]};
  const size_t s = p.kernel.size();
  for (size_t i = 0; i < s; ++i) {
    const double len = static_cast<double>(p.in[i + 2] + p.pads[i] + p.pads[i + s] - p.kernel[i]) / static_cast<double>(p.strides[i]);
    out.push_back(static_cast<int64_t>(p.ceil ? std::ceil(len) : std::floor(len)) + 1);
  }
  return out;
}

OpSpec SpecOf(const Pool& p) {
  OpSpec op;
  op.op_type = p.type;
  op.name = "pool";
  op.inputs = {{p.in, "float32"}};
  op.outputs = {{OutShape(p), "float32"}};
  op.attrs["kernel_shape"] = p.kernel;
  op.attrs["strides"] = p.strides;
  op.attrs["pads"] = p.pads;
  op.attrs["ceil_mode"] = int64_t{p.ceil};
  op.attrs["count_include_pad"] = int64_t{p.include_pad};
  return op;
}

// The pool on row-major data, axes padded to three (D, H, W).
std::vector<float> PlainPool(const Pool& p, const std::vector<float>& x) {
  const auto out = OutShape(p);
  const size_t s = p.kernel.size();
  int64_t in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1}, k3[3] = {1, 1, 1}, st3[3] = {1, 1, 1}, pl3[3] = {0, 0, 0}, pr3[3] = {0, 0, 0};
  for (size_t i = 0; i < s; ++i) {
    const size_t a = 3 - s + i;
    in3[a] = p.in[i + 2], out3[a] = out[i + 2], k3[a] = p.kernel[i], st3[a] = p.strides[i], pl3[a] = p.pads[i], pr3[a] = p.pads[i + s];
  }
  const int64_t NC = p.in[0] * p.in[1];
  std::vector<float> y;
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t od = 0; od < out3[0]; ++od)
      for (int64_t oh = 0; oh < out3[1]; ++oh)
        for (int64_t ow = 0; ow < out3[2]; ++ow) {
          double acc = p.type == "MaxPool" ? -INFINITY : 0;
          int64_t count = 0, padded = 1;
          const int64_t o[3] = {od, oh, ow};
          for (int a = 0; a < 3; ++a) {  // counted with padding: the window within the pads
            const int64_t lo = o[a] * st3[a] - pl3[a];
            padded *= std::min(lo + k3[a], in3[a] + pr3[a]) - lo;
          }
          for (int64_t kd = 0; kd < k3[0]; ++kd)
            for (int64_t kh = 0; kh < k3[1]; ++kh)
              for (int64_t kw = 0; kw < k3[2]; ++kw) {
                const int64_t id = od * st3[0] - pl3[0] + kd, ih = oh * st3[1] - pl3[1] + kh, iw = ow * st3[2] - pl3[2] + kw;
                if (id < 0 || ih < 0 || iw < 0 || id >= in3[0] || ih >= in3[1] || iw >= in3[2]) continue;
                const double v = x[static_cast<size_t>(((nc * in3[0] + id) * in3[1] + ih) * in3[2] + iw)];
                acc = p.type == "MaxPool" ? std::max(acc, v) : acc + v;
                ++count;
              }
          if (p.type == "AveragePool") acc /= static_cast<double>(p.include_pad ? padded : count);
          y.push_back(static_cast<float>(acc));
        }
  return y;
}

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
