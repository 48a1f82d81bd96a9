// The pool loop over channels-first tensors (planar_pool.h), and impl.onednn's row-major pool
// kernel that runs it where oneDNN has no JIT kernel, against plain loops: max and average
// (padding counted or not), 1-D to 3-D windows, strides 1, 2 and 3 (the vector paths and the
// scalar one), pads and ceil_mode's partial windows, lines shorter and longer than a vector.
#include "engine/backends/onednn/planar_pool.h"

#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/backends/onednn/pool_test_support.h"

namespace tilebank::engine {
namespace {

std::vector<float> InputOf(const Pool& p) {
  std::vector<float> x(static_cast<size_t>(Tensor::NumElements(p.in)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.61 * i) * 4 + (i % 7) * 0.3);
  return x;
}

double WorstError(const std::vector<float>& want, const float* got) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(want[i] - got[i])));
  return worst;
}

void CheckPool(const Pool& p) {
  CAPTURE(p.type);
  CAPTURE(p.in.size());
  CAPTURE(p.in.back());
  const OpSpec spec = SpecOf(p);
  const std::vector<float> x = InputOf(p), want = PlainPool(p, x);
  auto window = OwnPoolWindowOf(spec);
  REQUIRE_MESSAGE(window.ok(), window.status().message());
  std::vector<float> got(want.size(), 1234.f);
  PlanarPool(*window, p.in[0] * p.in[1]).Run(x.data(), got.data());
  CHECK(WorstError(want, got.data()) < 1e-5);

  // impl.onednn's kernel of the same node, both of its paths.
  REQUIRE(OneDnnSupportsVectorOp(spec).ok());
  auto kernel = OneDnnVectorKernel(spec);
  Tensor input(p.in), output;
  input.data = x;
  REQUIRE(kernel->Prepare({&input}).ok());
  REQUIRE(kernel->Run().ok());
  REQUIRE(kernel->Fetch(&output).ok());
  CHECK(WorstError(want, output.data.data()) < 1e-5);
  auto direct = OneDnnVectorKernel(spec);
  REQUIRE(direct->BindDirect({p.in}, {nullptr}).value());
  std::vector<float> out(want.size(), 1234.f);
  REQUIRE(direct->RunDirect({x.data()}, out.data()).ok());
  CHECK(WorstError(want, out.data()) < 1e-5);
}

TEST_CASE("the channels-first pool loop computes ONNX's MaxPool and AveragePool") {
  for (const char* type : {"MaxPool", "AveragePool"}) {
    CheckPool({type, {1, 16, 8, 32}, {2, 1}, {2, 1}, {0, 0, 0, 0}});            // CRNN's: rows only
    CheckPool({type, {1, 3, 16, 67}, {2, 2}, {2, 2}, {0, 0, 0, 0}});            // stride 2's vectors, an odd tail
    CheckPool({type, {1, 2, 8, 32}, {2, 2}, {2, 2}, {0, 0, 0, 0}});             // a line's vectors end at its last input
    CheckPool({type, {1, 2, 6, 66}, {3, 3}, {2, 2}, {1, 1, 1, 1}});             // stride 2's even and odd taps, padded
    CheckPool({type, {1, 2, 5, 40}, {4, 4}, {2, 2}, {0, 0, 0, 0}});             // four taps at stride 2
    CheckPool({type, {2, 5, 9, 45}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, true});  // ceil_mode's partial windows
    CheckPool({type, {1, 4, 20, 40}, {3, 3}, {1, 1}, {1, 1, 1, 1}});            // stride 1's vectors
    CheckPool({type, {1, 7, 9, 11}, {2, 3}, {2, 3}, {0, 1, 1, 0}});             // stride 3: one at a time
    CheckPool({type, {1, 6, 5}, {5}, {1}, {2, 2}});                              // shorter than a vector
    CheckPool({type, {1, 33, 50}, {3}, {2}, {1, 1}});                            // 1-D
    CheckPool({type, {1, 3, 5, 6, 37}, {2, 3, 3}, {2, 1, 2}, {0, 1, 1, 1, 1, 1}});  // 3-D
  }
  CheckPool({"AveragePool", {1, 4, 12, 40}, {3, 3}, {1, 1}, {1, 1, 1, 1}, true});  // the padding counted
}

TEST_CASE("the channels-first pool loop pools whole planes where the output keeps the input's size") {
  for (const char* type : {"MaxPool", "AveragePool"}) {
    CheckPool({type, {1, 64, 56, 56}, {3, 3}, {1, 1}, {1, 1, 1, 1}});            // PoolFormer's
    CheckPool({type, {1, 20, 7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}});              // rows shorter than a vector
    CheckPool({type, {2, 3, 14, 14}, {5, 5}, {1, 1}, {2, 2, 2, 2}});             // YOLO's SPPF
    CheckPool({type, {1, 2, 20, 20}, {13, 13}, {1, 1}, {6, 6, 6, 6}});           // SPP's largest
    CheckPool({type, {1, 3, 2, 3}, {5, 5}, {1, 1}, {2, 2, 2, 2}});               // a plane smaller than the window
    CheckPool({type, {1, 3, 9, 10}, {2, 4}, {1, 1}, {0, 1, 1, 2}});              // uneven pads
    CheckPool({type, {1, 5, 1, 33}, {1, 3}, {1, 1}, {0, 1, 0, 1}});              // one row
    CheckPool({type, {1, 2, 1, 9, 17}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1, 0, 1, 1}});  // 3-D of depth 1
  }
  CheckPool({"AveragePool", {1, 4, 11, 13}, {3, 3}, {1, 1}, {1, 1, 1, 1}, true});  // the padding counted
}

TEST_CASE("the channels-first pool loop refuses dilated windows") {
  OpSpec spec = SpecOf({"MaxPool", {1, 8, 10, 10}, {3, 3}, {1, 1}, {0, 0, 0, 0}});
  spec.attrs["dilations"] = std::vector<int64_t>{2, 2};
  spec.outputs[0].shape = {1, 8, 6, 6};
  CHECK_FALSE(OwnPoolWindowOf(spec).ok());
}

}  // namespace
}  // namespace tilebank::engine
