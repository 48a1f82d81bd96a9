// impl.onednn's binary elementwise kernel against plain loops where its second operand broadcasts
// over a short run of trailing values (ShortRunBroadcast: repeated into one row per outer index), or
// is a short row over leading axes (the row tiled into a longer one),
// beside runs too long for that and operands full over the trailing axes: each of Add, Sub, Mul and
// Div, the operand constant (repeated once at bind) or given on each run (two runs, new values);
// outputs of at most 16384 values run by rows on the calling thread (BroadcastBinaryRows), larger
// ones on oneDNN's primitive; a middle axis broadcast, scalars, and Add's and Mul's broadcast operand
// given first (Sub's and Div's refused).
#include <doctest/doctest.h>

#include <cmath>
#include <utility>

#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {
namespace {

std::vector<float> ValuesOf(int64_t n, double seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.37 * i + seed) * 1.5 + 2.0);  // no zero divisors
  return v;
}

// a (out's shape) op b (padded to out's rank, broadcast), in plain loops.
std::vector<float> Broadcast(const std::string& type, const std::vector<int64_t>& out, const std::vector<float>& a, std::vector<int64_t> b_shape,
                             const std::vector<float>& b) {
  b_shape.insert(b_shape.begin(), out.size() - b_shape.size(), 1);
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), at = 0, stride = 1;
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
      const int64_t coordinate = rest % out[d];
      rest /= out[d];
      if (b_shape[d] != 1) at += coordinate * stride;
      stride *= b_shape[d];
    }
    const float x = a[i], z = b[static_cast<size_t>(at)];
    y[i] = type == "Add" ? x + z : type == "Sub" ? x - z : type == "Mul" ? x * z : x / z;
  }
  return y;
}

double WorstDifference(const std::vector<float>& want, const float* got) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(want[i] - got[i])));
  return worst;
}

TEST_CASE("impl.onednn binary ops: an operand broadcast over a short run of trailing values, given at bind or on each run") {
  struct Case {
    std::vector<int64_t> out, other;
    bool other_first = false;  // the broadcast operand as input 0 (Add and Mul only; Sub and Div refused)
  };
  const std::vector<Case> cases = {{{6, 10, 3, 3}, {1, 10, 1, 1}},   // StyleGAN's modulation: runs of 9
                                   {{2, 5, 7, 2}, {5, 7, 1}},         // runs of 2 after two full axes
                                   {{3, 4, 15}, {4, 1}},              // 15: the longest repeated
                                   {{2, 8, 4, 4}, {1, 8, 1, 1}},      // 16: broadcast by oneDNN as it is
                                   {{4, 6, 5}, {6, 5}},               // full trailing axes of 30: no run
                                   {{1, 1024, 3}, {1, 1, 3}},         // a short row (3) tiled 256 times
                                   {{12, 2, 7}, {2, 7}},              // a row of 14 tiled 4 times
                                   {{6, 3}, {3}},                     // too few rows to tile
                                   {{2, 96, 100}, {96, 1}},           // large (19200 values): oneDNN's primitive, not the rows on one thread
                                   {{1, 3, 128, 128}, {1, 3, 128, 128}},
                                   {{4, 5, 6}, {4, 1, 6}},            // a middle axis broadcast
                                   {{3, 5, 6}, {3, 5, 6}},            // full and small
                                   {{4, 5}, {}},                      // a scalar
                                   {{4, 5}, {1}},                     // a one-value tensor
                                   {{4, 5}, {5}, true},               // the short row first
                                   {{2, 3, 7}, {3, 1}, true},         // a run first
                                   {{2, 96, 100}, {96, 1}, true}};    // large, the broadcast operand first
  for (const std::string type : {"Add", "Sub", "Mul", "Div"})
    for (const Case& c : cases) {
      CAPTURE(type);
      CAPTURE(c.out.size());
      CAPTURE(c.out.back());
      CAPTURE(c.other_first);
      OpSpec op;
      op.op_type = type;
      op.name = "binary";
      op.inputs = {{c.out, "float32"}, {c.other, "float32"}};
      if (c.other_first) std::swap(op.inputs[0], op.inputs[1]);
      op.outputs = {{c.out, "float32"}};
      if (c.other_first && (type == "Sub" || type == "Div")) {
        CHECK(!OneDnnSupportsVectorOp(op).ok());
        continue;
      }
      REQUIRE(OneDnnSupportsVectorOp(op).ok());
      // Operands in input order (the full one, a, and the other); a commutes with the other here.
      const int full = c.other_first ? 1 : 0, other = 1 - full;
      auto ordered = [&](auto a_value, auto other_value) {
        std::vector<decltype(a_value)> v(2);
        v[full] = a_value, v[other] = other_value;
        return v;
      };
      const std::vector<float> a = ValuesOf(Tensor::NumElements(c.out), 1);
      Tensor first(c.out), second(c.other);
      first.data = a;
      for (bool constant_operand : {true, false}) {
        CAPTURE(constant_operand);
        auto kernel = OneDnnVectorKernel(op);
        second.data = ValuesOf(Tensor::NumElements(c.other), 2);
        REQUIRE((*kernel).BindDirect(ordered(c.out, c.other), ordered(static_cast<const Tensor*>(nullptr), constant_operand ? &second : nullptr)).value());
        for (double seed : {2.0, 3.0}) {
          if (!constant_operand) second.data = ValuesOf(Tensor::NumElements(c.other), seed);
          const std::vector<float> want = Broadcast(type, c.out, a, c.other, second.data);
          std::vector<float> got(want.size(), 1234.f);
          REQUIRE(kernel->RunDirect(ordered(a.data(), constant_operand ? nullptr : second.data.data()), got.data()).ok());
          CHECK(WorstDifference(want, got.data()) < 1e-5);
        }
      }
      // The measured path: both operands copied in.
      auto measured = OneDnnVectorKernel(op);
      REQUIRE(measured->Prepare(ordered(static_cast<const Tensor*>(&first), static_cast<const Tensor*>(&second))).ok());
      REQUIRE(measured->Run().ok());
      Tensor output;
      REQUIRE(measured->Fetch(&output).ok());
      CHECK(output.shape == c.out);
      const std::vector<float> want = Broadcast(type, c.out, a, c.other, second.data);
      CHECK(WorstDifference(want, output.data.data()) < 1e-5);
    }
}

}  // namespace
}  // namespace tilebank::engine
