// The registry's float32 fast paths against the float64 reference kernels (which they do not take)
// on the same values: Conv and ConvTranspose on oneDNN's convolution and deconvolution (grouped,
// dilated, strided, padded, output_padding and output_shape, 1-3 spatial dims), ConvTranspose whose
// kernel tiles the output as a GEMM and a scatter; LSTM, GRU and RNN
// in float on oneDNN's sgemm (both directions, sequence_lens, initial states, peepholes, clip,
// linear_before_reset, batch-first layout) and on oneDNN's RNN primitives where they take the node; MatMul (broadcast batches, vectors) and Gemm (transposes,
// alpha, beta, C broadcast) on oneDNN's sgemm.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "engine/core/parallel_for.h"
#include "engine/core/threads.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/kernels/kernel_test_values.h"
#include "engine/kernels/onednn_rnn_kernel.h"

namespace tilebank::engine::kernels {
namespace {

struct Case {
  std::string op_type;
  std::vector<std::optional<std::vector<int64_t>>> inputs;  // shapes; nullopt: an optional input left out
  nlohmann::json attrs;
  std::vector<int64_t> sequence_lens = {};  // the recurrent ops' input 4 (int32), when not empty
  int outputs = 1;
  bool rnn_primitive = false;  // a recurrent op oneDNN's RNN primitives compute (else the per-step kernel)
  bool constant_weights = false;  // W, R, B and P are constants of the graph
};

bool Recurrent(const std::string& op_type) { return op_type == "LSTM" || op_type == "GRU" || op_type == "RNN"; }

// The node's outputs computed with its floating inputs in `dtype`, by the implementation named
// `implementation` (empty: the one Create chooses).
std::vector<TypedTensor> Run(const Case& c, DType dtype, const std::string& implementation = "") {
  std::vector<std::optional<TypedTensor>> operands;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (i == 4 && !c.sequence_lens.empty()) {
      operands.push_back(TypedTensor::Of<int32_t>({static_cast<int64_t>(c.sequence_lens.size())}, {c.sequence_lens.begin(), c.sequence_lens.end()}));
      continue;
    }
    operands.push_back(c.inputs[i] ? std::optional<TypedTensor>(SineValues(*c.inputs[i], static_cast<int>(i)).CastTo(dtype)) : std::nullopt);
  }
  KernelInfo info;
  info.op_type = c.op_type;
  info.node_name = c.op_type;
  info.attrs = Attrs(c.attrs);
  info.num_outputs = c.outputs;
  if (c.constant_weights) info.constant_input = {false, true, true, true, false, false, false, true};  // W, R, B, P
  KernelInputs in;
  for (const auto& t : operands) {
    info.input_types.push_back(t ? t->dtype : DType::kUndefined);
    in.push_back(t ? &*t : nullptr);
  }
  auto kernel = implementation.empty() ? KernelRegistry::Default().Create(info) : KernelRegistry::Default().Create(info, implementation);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  std::vector<TypedTensor> out(static_cast<size_t>(c.outputs));
  const Status s = (*kernel)->Compute(in, &out);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return out;
}

TEST_CASE("the float32 fast paths compute what the reference kernels do, in float32 and float64") {
  using Shape = std::optional<std::vector<int64_t>>;
  // A present input of these dimensions (dims({6}) reads as optional(int) to GCC).
  const auto dims = [](std::initializer_list<int64_t> d) { return Shape(std::vector<int64_t>(d)); };
  const Shape none = std::nullopt;
  const std::vector<Case> cases = {
      {"ConvTranspose", {dims({1, 8, 7, 9}), dims({8, 3, 3, 3}), dims({6})}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}, {"group", 2}}},
      {"ConvTranspose", {dims({2, 8, 5, 6}), dims({8, 3, 3, 3})}, {{"strides", {2, 2}}, {"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}, {"group", 4}}},
      {"ConvTranspose", {dims({1, 4, 11}), dims({4, 6, 5}), dims({6})}, {{"strides", {3}}, {"pads", {1, 1}}, {"output_padding", {2}}}},
      {"ConvTranspose", {dims({1, 4, 3, 4, 5}), dims({4, 2, 3, 3, 3}), dims({4})}, {{"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}, {"group", 2}}},
      {"ConvTranspose", {dims({1, 3, 4, 4}), dims({3, 5, 3, 3}), dims({5})}, {{"strides", {3, 3}}, {"output_shape", {13, 14}}}},
      {"ConvTranspose", {dims({1, 3, 4, 4}), dims({3, 2, 2, 2}), dims({2})}, {{"strides", {2, 2}}, {"auto_pad", "SAME_UPPER"}}},
      // Kernels that tile the output (strides = kernel): one GEMM and a scatter ("gemm").
      {"ConvTranspose", {dims({1, 6, 5, 7}), dims({6, 4, 2, 2}), dims({4})}, {{"strides", {2, 2}}}},
      {"ConvTranspose", {dims({2, 5, 9}), dims({5, 3, 3})}, {{"strides", {3}}, {"kernel_shape", {3}}}},
      {"ConvTranspose", {dims({2, 3, 2, 3, 4}), dims({3, 2, 2, 1, 3}), dims({2})}, {{"strides", {2, 1, 3}}}},
      {"Conv", {dims({1, 6, 9, 8}), dims({9, 2, 3, 3}), dims({9})}, {{"strides", {2, 1}}, {"pads", {1, 0, 1, 2}}, {"dilations", {1, 2}}, {"group", 3}}},
      {"Conv", {dims({1, 4, 5, 6, 7}), dims({6, 4, 3, 3, 3}), dims({6})}, {{"pads", {1, 1, 1, 1, 1, 1}}}},
      // X [seq 6, batch 3, input 5], hidden 4; B, sequence_lens, initial_h, initial_c, P.
      {"LSTM", {dims({6, 3, 5}), dims({2, 16, 5}), dims({2, 16, 4}), dims({2, 32}), dims({3}), dims({2, 3, 4}), dims({2, 3, 4}), dims({2, 12})},
       {{"hidden_size", 4}, {"direction", "bidirectional"}}, {6, 2, 4}, 3},
      {"LSTM", {dims({3, 6, 5}), dims({1, 16, 5}), dims({1, 16, 4}), dims({1, 32})}, {{"hidden_size", 4}, {"layout", 1}, {"clip", 0.3}}, {}, 3},
      {"GRU", {dims({6, 2, 5}), dims({2, 12, 5}), dims({2, 12, 4}), dims({2, 24}), none, dims({2, 2, 4})},
       {{"hidden_size", 4}, {"direction", "bidirectional"}}, {}, 2, true},
      {"GRU", {dims({6, 2, 5}), dims({1, 12, 5}), dims({1, 12, 4}), dims({1, 24}), dims({2})},
       {{"hidden_size", 4}, {"direction", "reverse"}, {"linear_before_reset", 1}}, {3, 6}, 2},
      {"RNN", {dims({6, 2, 5}), dims({1, 4, 5}), dims({1, 4, 4}), dims({1, 8})}, {{"hidden_size", 4}, {"activations", {"Relu"}}}, {}, 2, true},
      // On oneDNN's RNN primitives: both directions with initial states and peepholes, batch-first,
      // sequence_lens at full length, linear_before_reset, tanh and sigmoid RNNs.
      {"LSTM", {dims({6, 3, 5}), dims({2, 16, 5}), dims({2, 16, 4}), dims({2, 32}), none, dims({2, 3, 4}), dims({2, 3, 4}), dims({2, 12})},
       {{"hidden_size", 4}, {"direction", "bidirectional"}}, {}, 3, true},
      {"LSTM", {dims({3, 6, 5}), dims({2, 16, 5}), dims({2, 16, 4}), dims({2, 32}), dims({3}), dims({3, 2, 4})},
       {{"hidden_size", 4}, {"layout", 1}, {"direction", "bidirectional"}}, {6, 6, 6}, 3, true},
      {"LSTM", {dims({5, 1, 7}), dims({1, 12, 7}), dims({1, 12, 3})}, {{"direction", "reverse"}}, {}, 2, true},
      // Constant weights: oneDNN's GEMM-based RNN on plain weights timed against its own choice.
      {"LSTM", {dims({4, 2, 130}), dims({2, 512, 130}), dims({2, 512, 128}), dims({2, 1024}), none, dims({2, 2, 128}), dims({2, 2, 128}), dims({2, 384})},
       {{"hidden_size", 128}, {"direction", "bidirectional"}}, {}, 3, true, true},
      {"GRU", {dims({6, 2, 5}), dims({2, 12, 5}), dims({2, 12, 4}), dims({2, 24}), none, dims({2, 2, 4})},
       {{"hidden_size", 4}, {"direction", "bidirectional"}, {"linear_before_reset", 1}}, {}, 2, true},
      {"GRU", {dims({2, 6, 5}), dims({1, 12, 5}), dims({1, 12, 4}), dims({1, 24})}, {{"layout", 1}, {"linear_before_reset", 1}}, {}, 2, true},
      {"RNN", {dims({6, 2, 5}), dims({2, 4, 5}), dims({2, 4, 4}), dims({2, 8})}, {{"direction", "bidirectional"}}, {}, 2, true},
      {"RNN", {dims({6, 2, 5}), dims({1, 4, 5}), dims({1, 4, 4})}, {{"activations", {"Sigmoid"}}}, {}, 1, true},
      // Sequences whose scratchpad passes 1 MiB, in pieces of steps and a shorter last one (RecurrentPieceSteps):
      // both directions from an initial state, a batch-first reverse GRU of one batch, and a batch-first
      // LSTM of two batches.
      {"LSTM", {dims({301, 1, 256}), dims({2, 512, 256}), dims({2, 512, 128}), dims({2, 1024}), none, dims({2, 1, 128}), dims({2, 1, 128})},
       {{"hidden_size", 128}, {"direction", "bidirectional"}}, {}, 3, true},
      {"GRU", {dims({1, 301, 256}), dims({1, 384, 256}), dims({1, 384, 128}), dims({1, 768})},
       {{"hidden_size", 128}, {"direction", "reverse"}, {"layout", 1}, {"linear_before_reset", 1}}, {}, 2, true},
      {"LSTM", {dims({2, 150, 256}), dims({2, 512, 256}), dims({2, 512, 128}), dims({2, 1024}), none, dims({2, 2, 128})},
       {{"hidden_size", 128}, {"direction", "bidirectional"}, {"layout", 1}}, {}, 2, true},  // batch-first, two batches: strided pieces
      {"MatMul", {dims({2, 1, 3, 4}), dims({3, 4, 5})}, nlohmann::json::object()},
      {"MatMul", {dims({4}), dims({2, 4, 3})}, nlohmann::json::object()},
      {"MatMul", {dims({3, 7}), dims({7})}, nlohmann::json::object()},
      // A capsule network's prediction vectors: many tiny products, batches broadcast on both sides.
      {"MatMul", {dims({1, 6, 5, 16, 8}), dims({2, 6, 1, 8, 1})}, nlohmann::json::object()},
      // ... with a K of a vector and a part, A shared by three; products of two columns, each side broadcast over a different dimension.
      {"MatMul", {dims({1, 6, 5, 16, 11}), dims({3, 6, 1, 11, 1})}, nlohmann::json::object()},
      {"MatMul", {dims({2, 1, 3, 4, 5}), dims({1, 4, 3, 5, 2})}, nlohmann::json::object()},
      {"MatMul", {dims({2, 40, 3, 64}), dims({64, 70})}, nlohmann::json::object()},
      {"Gemm", {dims({4, 3}), dims({5, 4}), dims({5})}, {{"transA", 1}, {"transB", 1}, {"alpha", 0.5}, {"beta", 2.0}}},
      {"Gemm", {dims({3, 4}), dims({4, 5}), dims({3, 1})}, {{"beta", 0.0}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op_type);
    CAPTURE(c.attrs.dump());
    // The op's float32 table: the reference first, oneDNN last (the one Create chooses).
    KernelInfo info;
    info.op_type = c.op_type;
    info.input_types.assign(1, DType::kFloat32);
    const std::vector<std::string> table = Recurrent(c.op_type)              ? std::vector<std::string>{"reference", "onednn", "onednn.rnn"}
                                           : c.op_type == "ConvTranspose" ? std::vector<std::string>{"reference", "onednn", "gemm"}
                                                                          : std::vector<std::string>{"reference", "onednn"};
    CHECK(KernelRegistry::Default().Implementations(info) == table);
    const int64_t primitive_calls = OneDnnRecurrentCalls();
    const std::vector<TypedTensor> fast = Run(c, DType::kFloat32);
    CHECK(OneDnnRecurrentCalls() - primitive_calls == (c.rnn_primitive ? 1 : 0));
    std::vector<std::vector<TypedTensor>> references = {Run(c, DType::kFloat64), Run(c, DType::kFloat32, "reference")};
    if (Recurrent(c.op_type)) references.push_back(Run(c, DType::kFloat32, "onednn"));  // the per-step kernel
    if (c.op_type == "ConvTranspose") references.push_back(Run(c, DType::kFloat32, "onednn"));  // the deconvolution
    for (const auto& reference : references) {
      CAPTURE(DTypeName(reference[0].dtype));
      for (size_t k = 0; k < fast.size(); ++k) {
        CAPTURE(k);
        REQUIRE(fast[k].dtype == DType::kFloat32);
        REQUIRE(fast[k].shape == reference[k].shape);
        REQUIRE(fast[k].size() > 0);
        double worst = 0;
        for (int64_t i = 0; i < fast[k].size(); ++i) worst = std::max(worst, std::abs(fast[k].At(i) - reference[k].At(i)));
        CHECK(worst < 1e-4);
      }
    }
  }
}

TEST_CASE("a recurrent sequence runs in pieces only where its scratchpad passes 1 MiB, in about equal pieces of at least 32 steps") {
  CHECK(RecurrentPieceSteps(498, kMostRecurrentScratchBytes) == 498);
  CHECK(RecurrentPieceSteps(498, 3715 << 10) == 125);  // Demucs's LSTM: 4 pieces
  CHECK(RecurrentPieceSteps(301, kMostRecurrentScratchBytes + 1) == 151);
  CHECK(RecurrentPieceSteps(40, 64 << 20) == 32);
  CHECK(RecurrentPieceSteps(20, 64 << 20) == 20);
}

// The pool `c` made for its input's static shape, run over plain buffers (ComputeOnBuffers, what
// the executor's registry steps try first); nullopt where the kernel declines.
std::optional<std::vector<float>> PoolOnBuffers(const Case& c, int64_t output_size) {
  KernelInfo info;
  info.op_type = c.op_type;
  info.node_name = c.op_type;
  info.attrs = Attrs(c.attrs);
  info.input_types = {DType::kFloat32};
  info.input_shapes = {c.inputs[0]};
  auto kernel = KernelRegistry::Default().Create(info);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  const TypedTensor x = SineValues(*c.inputs[0], 0);
  std::vector<float> y(static_cast<size_t>(output_size), -1.f);
  if (!(*kernel)->ComputeOnBuffers({x.data<float>()}, y.data())) return std::nullopt;
  return y;
}

TEST_CASE("float32 MaxPool and AveragePool of 1 to 3 spatial dimensions (on the own pool loop) compute what the float64 reference does") {
  const std::vector<Case> cases = {
      {"MaxPool", {std::vector<int64_t>{1, 3, 8, 10, 12}}, {{"kernel_shape", {2, 2, 2}}, {"strides", {2, 2, 2}}}},
      {"MaxPool", {std::vector<int64_t>{2, 4, 7, 9, 11}}, {{"kernel_shape", {3, 3, 3}}, {"strides", {2, 1, 2}}, {"pads", {1, 0, 1, 1, 2, 0}}}},
      {"AveragePool", {std::vector<int64_t>{1, 3, 7, 9, 11}}, {{"kernel_shape", {3, 2, 3}}, {"pads", {1, 1, 1, 1, 0, 1}}}},
      {"AveragePool", {std::vector<int64_t>{1, 3, 7, 9, 11}}, {{"kernel_shape", {3, 2, 3}}, {"pads", {1, 1, 1, 1, 0, 1}}, {"count_include_pad", 1}}},
      {"AveragePool", {std::vector<int64_t>{2, 5, 33}}, {{"kernel_shape", {4}}, {"strides", {3}}, {"pads", {2, 1}}}},
      {"MaxPool", {std::vector<int64_t>{1, 6, 13, 17}}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {"MaxPool", {std::vector<int64_t>{1, 2, 9, 9}}, {{"kernel_shape", {2, 2}}, {"dilations", {2, 2}}}},  // dilated: the reference
  };
  for (const Case& c : cases) {
    CAPTURE(c.op_type);
    CAPTURE(c.attrs.dump());
    const std::vector<TypedTensor> fast = Run(c, DType::kFloat32), reference = Run(c, DType::kFloat64);
    REQUIRE(fast[0].shape == reference[0].shape);
    double worst = 0;
    for (int64_t i = 0; i < fast[0].size(); ++i) worst = std::max(worst, std::abs(fast[0].At(i) - reference[0].At(i)));
    CHECK(worst < 1e-5);
    // Of static shape, over plain buffers: the same loop, the same floats; the dilated window declines.
    const auto on_buffers = PoolOnBuffers(c, fast[0].size());
    CHECK(on_buffers.has_value() == !c.attrs.contains("dilations"));
    if (on_buffers) CHECK(*on_buffers == std::vector<float>(fast[0].data<float>(), fast[0].data<float>() + fast[0].size()));
  }
}

TEST_CASE("float32 MaxPool with its Indices output (the own loop over the taps) computes what the float64 reference does, indices exactly") {
  const std::vector<Case> cases = {
      {"MaxPool", {std::vector<int64_t>{1, 5, 16, 18}}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}, {}, 2},  // torch's max_pool2d(return_indices)
      {"MaxPool", {std::vector<int64_t>{1, 4, 6, 7}}, {{"kernel_shape", {1, 1}}}, {}, 2},  // torch.onnx's offsets of each plane
      {"MaxPool", {std::vector<int64_t>{2, 3, 9, 11}}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"ceil_mode", 1}}, {}, 2},
      {"MaxPool", {std::vector<int64_t>{1, 3, 9, 7}}, {{"kernel_shape", {2, 3}}, {"storage_order", 1}}, {}, 2},
      {"MaxPool", {std::vector<int64_t>{1, 2, 9, 9}}, {{"kernel_shape", {2, 2}}, {"dilations", {2, 2}}}, {}, 2},
      {"MaxPool", {std::vector<int64_t>{1, 3, 6, 8, 10}}, {{"kernel_shape", {2, 2, 2}}, {"strides", {2, 2, 2}}}, {}, 2},
      {"MaxPool", {std::vector<int64_t>{3, 2, 21}}, {{"kernel_shape", {4}}, {"strides", {3}}, {"pads", {2, 2}}}, {}, 2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.attrs.dump());
    const std::vector<TypedTensor> fast = Run(c, DType::kFloat32), reference = Run(c, DType::kFloat64);
    REQUIRE(fast.size() == 2);
    REQUIRE(fast[0].shape == reference[0].shape);
    REQUIRE(fast[1].shape == reference[1].shape);
    REQUIRE(fast[1].dtype == DType::kInt64);
    double worst = 0;
    int64_t index_mismatches = 0;
    for (int64_t i = 0; i < fast[0].size(); ++i) {
      worst = std::max(worst, std::abs(fast[0].At(i) - reference[0].At(i)));
      index_mismatches += fast[1].data<int64_t>()[i] != reference[1].data<int64_t>()[i];
    }
    CHECK(worst < 1e-6);
    CHECK(index_mismatches == 0);
  }
}

// Worst absolute difference of two runs' outputs, which must have the same shapes.
double WorstDifference(const std::vector<TypedTensor>& a, const std::vector<TypedTensor>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    REQUIRE(a[k].shape == b[k].shape);
    REQUIRE(a[k].size() > 0);
    for (int64_t i = 0; i < a[k].size(); ++i) worst = std::max(worst, std::abs(a[k].At(i) - b[k].At(i)));
  }
  return worst;
}

TEST_CASE("a bidirectional layer on oneDNN's RNN primitives computes the same with its directions side by side on two threads or in turn on four") {
  const int before = ParallelThreads();
  const auto dims = [](std::initializer_list<int64_t> d) { return std::optional<std::vector<int64_t>>(std::vector<int64_t>(d)); };
  // Batch x hidden 3 x 4 (a step too small to share: side by side on any count of threads) and
  // 8 x 160 (side by side on two threads, in turn on four), each with initial states.
  const std::vector<Case> cases = {
      {"LSTM", {dims({6, 3, 5}), dims({2, 16, 5}), dims({2, 16, 4}), dims({2, 32}), std::nullopt, dims({2, 3, 4}), dims({2, 3, 4})},
       {{"hidden_size", 4}, {"direction", "bidirectional"}}, {}, 3, true},
      {"GRU", {dims({5, 8, 7}), dims({2, 480, 7}), dims({2, 480, 160}), dims({2, 960}), std::nullopt, dims({2, 8, 160})},
       {{"hidden_size", 160}, {"direction", "bidirectional"}, {"linear_before_reset", 1}}, {}, 2, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op_type);
    const std::vector<TypedTensor> per_step = Run(c, DType::kFloat32, "onednn");  // the per-step kernel
    for (int threads : {2, 4}) {
      CAPTURE(threads);
      SetLibraryThreads(threads);
      const int64_t calls = OneDnnRecurrentCalls();
      const std::vector<TypedTensor> both = Run(c, DType::kFloat32);
      CHECK(OneDnnRecurrentCalls() - calls == 1);
      CHECK(WorstDifference(both, per_step) < 1e-4);
    }
  }
  SetLibraryThreads(before);
}

}  // namespace
}  // namespace tilebank::engine::kernels

namespace tilebank::engine::kernels {
namespace {

TEST_CASE("the LSTM on oneDNN's primitive reads weights that are not graph constants again on every call") {
  KernelInfo info;
  info.op_type = "LSTM";
  info.node_name = "lstm";
  info.attrs = Attrs(nlohmann::json{{"hidden_size", 3}});
  info.input_types = {DType::kFloat32, DType::kFloat32, DType::kFloat32};
  info.num_outputs = 1;
  std::string implementation;
  auto kernel = KernelRegistry::Default().Create(info, &implementation);
  REQUIRE(kernel.ok());
  CHECK(implementation == "onednn.rnn");
  auto reference = KernelRegistry::Default().Create(info, std::string("reference"));
  REQUIRE(reference.ok());
  TypedTensor x = SineValues({4, 1, 5}, 1), w = SineValues({1, 12, 5}, 2), r = SineValues({1, 12, 3}, 3);
  for (int call = 0; call < 2; ++call) {
    CAPTURE(call);
    if (call == 1)
      for (int64_t i = 0; i < w.size(); ++i) w.data<float>()[i] *= -0.5f;  // new values at the same address
    std::vector<TypedTensor> fast(1), slow(1);
    REQUIRE((*kernel)->Compute({&x, &w, &r}, &fast).ok());
    REQUIRE((*reference)->Compute({&x, &w, &r}, &slow).ok());
    double worst = 0;
    for (int64_t i = 0; i < fast[0].size(); ++i) worst = std::max(worst, std::abs(fast[0].At(i) - slow[0].At(i)));
    CHECK(worst < 1e-5);
  }
}

}  // namespace
}  // namespace tilebank::engine::kernels
