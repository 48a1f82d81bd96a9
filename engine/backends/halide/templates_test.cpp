// Every template builds and computes the reference's result, at its default policy and at
// random valid policies, on small shapes of every supported operator.
#include <doctest/doctest.h>

#include "engine/core/precision_mode.h"

#include <cmath>
#include <limits>
#include <utility>
#include <tuple>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/catalog/template_registry.h"
#include "engine/backends/op_template.h"
#include "engine/tuning/runner.h"
#include "engine/tuning/search_strategy.h"

namespace tilebank::engine {
namespace {

OpSpec Op(const std::string& json) {
  auto op = ParseOpSpec(nlohmann::json::parse(json), 0);
  REQUIRE_MESSAGE(op.ok(), op.status().message());
  return op.value();
}

// Runs `t` under `policy` on `op` against the reference.
void CheckPolicy(const OpTemplate& t, const OpSpec& op, const Policy& policy) {
  auto runner = Runner::Create(op, 3);
  REQUIRE(runner.ok());
  CAPTURE(PolicyText(policy));
  auto kernel = t.Build(op, policy);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  RunResult r = runner->Check(*kernel.value(), LowersPrecision(policy));
  CHECK_MESSAGE(r.ok, r.failure);
}

void CheckAllTemplates(const OpSpec& op, int random_policies) {
  auto templates = TemplatesFor(op);
  REQUIRE_MESSAGE(templates.ok(), templates.status().message());
  auto runner = Runner::Create(op, 3);
  REQUIRE(runner.ok());
  std::vector<const OpTemplate*> all = {templates->primary};
  all.insert(all.end(), templates->alternatives.begin(), templates->alternatives.end());
  for (const OpTemplate* t : all) {
    CAPTURE(t->id());
    SearchSpace space = t->Space(op);
    std::vector<Policy> policies = {t->DefaultPolicy(op)};
    if (space.size() > 0) {
      auto random = MakeStrategy(StrategyKind::kRandom, space, 11);
      for (const auto& c : random->Propose(random_policies)) policies.push_back(space.PolicyOf(c));
    }
    for (const auto& policy : policies) {
      CAPTURE(PolicyText(policy));
      auto kernel = t->Build(op, policy);
      REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
      RunResult r = runner->Check(*kernel.value(), LowersPrecision(policy));  // a bf16 policy within bf16's tolerance
      CHECK_MESSAGE(r.ok, r.failure);
    }
  }
}

const char* kFloat = R"("type":"float32")";

std::string Desc(std::initializer_list<std::string> shapes) {
  std::string s = "[";
  for (const auto& shape : shapes) s += std::string(s.size() > 1 ? "," : "") + R"({"shape":)" + shape + "," + kFloat + "}";
  return s + "]";
}

// A one-input op of shape `shape` (output the same) with one int attribute.
OpSpec SameShapeOp(const char* type, const char* shape, const char* attr, int64_t value) {
  return Op(std::string(R"({"op":")") + type + R"(","input_desc":)" + Desc({shape}) + R"(,"output_desc":)" + Desc({shape}) +
            R"(,"attr":[{"name":")" + attr + R"(","type":"int","value":)" + std::to_string(value) + "}]}");
}

TEST_CASE("templates: GEMM family (odd sizes, transposes, bias, batches)") {
  CheckAllTemplates(Op(R"({"op":"MatMul","input_desc":)" + Desc({"[17,33]", "[33,31]"}) + R"(,"output_desc":)" + Desc({"[17,31]"}) + "}"), 3);
  CheckAllTemplates(Op(R"({"op":"Gemm","input_desc":)" + Desc({"[40,20]", "[50,40]", "[50]"}) + R"(,"output_desc":)" + Desc({"[20,50]"}) +
                       R"(,"attr":[{"name":"transA","type":"int","value":1},{"name":"transB","type":"int","value":1},{"name":"alpha","type":"float","value":0.5}]})"),
                    3);
  CheckAllTemplates(Op(R"({"op":"BatchMatMul","input_desc":)" + Desc({"[3,24,40]", "[3,40,36]"}) + R"(,"output_desc":)" + Desc({"[3,24,36]"}) + "}"), 2);
  // N of exactly one vector (AVX-512) with batches on both sides: Swin V2's window attention.
  CheckAllTemplates(Op(R"({"op":"MatMul","input_desc":)" + Desc({"[4,2,16,8]", "[4,2,8,16]"}) + R"(,"output_desc":)" + Desc({"[4,2,16,16]"}) + "}"), 2);
  CheckAllTemplates(Op(R"({"op":"MatMul","input_desc":)" + Desc({"[2,5,8]", "[2,8,16]"}) + R"(,"output_desc":)" + Desc({"[2,5,16]"}) + "}"), 2);
}

TEST_CASE("templates: B packed into panels once (pack_b root) with a short last panel, transposed, batched or broadcast") {
  const std::vector<OpSpec> ops = {
      Op(R"({"op":"MatMul","input_desc":)" + Desc({"[17,33]", "[33,31]"}) + R"(,"output_desc":)" + Desc({"[17,31]"}) + "}"),
      Op(R"({"op":"Gemm","input_desc":)" + Desc({"[20,40]", "[50,40]", "[50]"}) + R"(,"output_desc":)" + Desc({"[20,50]"}) +
         R"(,"attr":[{"name":"transB","type":"int","value":1}]})"),
      Op(R"({"op":"BatchMatMul","input_desc":)" + Desc({"[3,24,40]", "[3,40,36]"}) + R"(,"output_desc":)" + Desc({"[3,24,36]"}) + "}"),
      Op(R"({"op":"MatMul","input_desc":)" + Desc({"[2,5,24]", "[24,70]"}) + R"(,"output_desc":)" + Desc({"[2,5,70]"}) + "}")};
  for (const OpSpec& op : ops) {
    CAPTURE(op.canonical.text);
    auto templates = TemplatesFor(op);
    REQUIRE(templates.ok());
    const OpTemplate& t = *templates->primary;
    for (int64_t vec_blocks : {1, 2}) {
      Policy policy = t.DefaultPolicy(op);
      for (auto& knob : policy) {
        if (knob.name == "pack_b") knob.value = std::string("root");
        if (knob.name == "vec_blocks") knob.value = vec_blocks;
        if (knob.name == "tile_m") knob.value = int64_t{2};
      }
      CheckPolicy(t, op, policy);
    }
  }
}

TEST_CASE("templates: B packed with a guarded tail of N under M blocks (wrong results and a heap overrun in OPAT: 16x64x96)") {
  const OpSpec op = Op(R"({"op":"MatMul","input_desc":)" + Desc({"[16,64]", "[64,96]"}) + R"(,"output_desc":)" + Desc({"[16,96]"}) + "}");
  auto templates = TemplatesFor(op);
  REQUIRE(templates.ok());
  const OpTemplate& t = *templates->primary;
  // {block_m, block_n, tile_m, vec_blocks, pack_b}: each failed before the accumulator's extents were fixed.
  const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, const char*>> cases = {
      {4, 2, 4, 4, "block"}, {4, 1, 4, 4, "block"}, {4, 1, 4, 4, "root"}, {8, 1, 2, 4, "block"}, {4, 8, 4, 1, "block"}, {4, 2, 3, 4, "block"}};
  for (const auto& [block_m, block_n, tile_m, vec_blocks, pack_b] : cases) {
    Policy policy = t.DefaultPolicy(op);
    for (auto& knob : policy) {
      if (knob.name == "block_m") knob.value = block_m;
      if (knob.name == "block_n") knob.value = block_n;
      if (knob.name == "tile_m") knob.value = tile_m;
      if (knob.name == "vec_blocks") knob.value = vec_blocks;
      if (knob.name == "pack_b") knob.value = std::string(pack_b);
      if (knob.name == "unroll_k") knob.value = int64_t{1};
      if (knob.name == "parallel") knob.value = int64_t{0};
      if (knob.name == "loop_order") knob.value = std::string("mn");
    }
    CheckPolicy(t, op, policy);
  }
}

TEST_CASE("templates: convolutions (padding, asymmetric padding, stride, dilation, groups, depthwise, bias)") {
  CheckAllTemplates(Op(R"({"op":"Conv","input_desc":)" + Desc({"[1,16,12,12]", "[32,16,3,3]", "[32]"}) + R"(,"output_desc":)" + Desc({"[1,32,12,12]"}) +
                       R"(,"attr":[{"name":"pads","type":"list_int","value":[1,1,1,1]}]})"),
                    3);
  CheckAllTemplates(Op(R"({"op":"Conv","input_desc":)" + Desc({"[2,32,11,11]", "[32,1,3,3]"}) + R"(,"output_desc":)" + Desc({"[2,32,5,5]"}) +
                       R"(,"attr":[{"name":"group","type":"int","value":32},{"name":"strides","type":"list_int","value":[2,2]}]})"),
                    3);
  CheckAllTemplates(Op(R"({"op":"Conv","input_desc":)" + Desc({"[1,3,13,13]", "[8,3,3,3]"}) + R"(,"output_desc":)" + Desc({"[1,8,9,9]"}) +
                       R"(,"attr":[{"name":"dilations","type":"list_int","value":[2,2]}]})"),
                    2);
  // A causal Conv1d lifted to 2-D (pads only before, on the width) and ZeroPad2d((0, 1, 0, 1))'s (only after).
  CheckAllTemplates(Op(R"({"op":"Conv","input_desc":)" + Desc({"[1,8,1,20]", "[8,8,1,3]", "[8]"}) + R"(,"output_desc":)" + Desc({"[1,8,1,20]"}) +
                       R"(,"attr":[{"name":"pads","type":"list_int","value":[0,4,0,0]},{"name":"dilations","type":"list_int","value":[1,2]}]})"),
                    2);
  CheckAllTemplates(Op(R"({"op":"Conv","input_desc":)" + Desc({"[1,4,9,8]", "[6,4,3,3]"}) + R"(,"output_desc":)" + Desc({"[1,6,8,7]"}) +
                       R"(,"attr":[{"name":"pads","type":"list_int","value":[0,0,1,1]}]})"),
                    2);
}

TEST_CASE("templates: vector ops") {
  CheckAllTemplates(Op(R"({"op":"Softmax","input_desc":)" + Desc({"[6,64]"}) + R"(,"output_desc":)" + Desc({"[6,64]"}) + "}"), 3);
  // Softmax across rows: a middle axis with a vectorized inner run, and a first axis with a short one.
  CheckAllTemplates(SameShapeOp("Softmax", "[3,7,40]", "axis", 1), 3);
  CheckAllTemplates(SameShapeOp("Softmax", "[9,5]", "axis", 0), 2);
  // ReduceSum with no axes and noop_with_empty_axes: a copy.
  CheckAllTemplates(SameShapeOp("ReduceSum", "[3,50]", "noop_with_empty_axes", 1), 2);
  CheckAllTemplates(Op(R"({"op":"LayerNormalization","input_desc":)" + Desc({"[5,96]", "[96]", "[96]"}) + R"(,"output_desc":)" + Desc({"[5,96]"}) + "}"), 3);
  CheckAllTemplates(Op(R"({"op":"ReduceMax","input_desc":)" + Desc({"[4,5,32]"}) + R"(,"output_desc":)" + Desc({"[4,1,32]"}) +
                       R"(,"attr":[{"name":"axes","type":"list_int","value":[1]}]})"),
                    2);
  CheckAllTemplates(Op(R"({"op":"ReduceL2","input_desc":)" + Desc({"[2,6,40]"}) + R"(,"output_desc":)" + Desc({"[2,6,1]"}) +
                       R"(,"attr":[{"name":"axes","type":"list_int","value":[-1]}]})"),
                    2);
  CheckAllTemplates(Op(R"({"op":"ReduceMean","input_desc":)" + Desc({"[3,4,48]"}) + R"(,"output_desc":)" + Desc({"[3,4,1]"}) +
                       R"(,"attr":[{"name":"axes","type":"list_int","value":[-1]}]})"),
                    2);
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    CheckAllTemplates(Op(std::string(R"({"op":")") + op + R"(","input_desc":)" + Desc({"[7,1,40]", "[3,1]"}) + R"(,"output_desc":)" + Desc({"[7,3,40]"}) + "}"), 1);
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Gelu"})
    CheckAllTemplates(Op(std::string(R"({"op":")") + op + R"(","input_desc":)" + Desc({"[9,70]"}) + R"(,"output_desc":)" + Desc({"[9,70]"}) + "}"), 1);
  CheckAllTemplates(Op(R"({"op":"AveragePool","input_desc":)" + Desc({"[1,4,9,9]"}) + R"(,"output_desc":)" + Desc({"[1,4,5,5]"}) +
                       R"(,"attr":[{"name":"kernel_shape","type":"list_int","value":[3,3]},{"name":"strides","type":"list_int","value":[2,2]},{"name":"pads","type":"list_int","value":[1,1,1,1]},{"name":"count_include_pad","type":"int","value":1}]})"),
                    2);
  CheckAllTemplates(Op(R"({"op":"MaxPool","input_desc":)" + Desc({"[1,4,9,9]"}) + R"(,"output_desc":)" + Desc({"[1,4,4,4]"}) +
                       R"(,"attr":[{"name":"kernel_shape","type":"list_int","value":[2,2]},{"name":"strides","type":"list_int","value":[2,2]}]})"),
                    2);
}

bool HasAlternative(const OpSpec& op, const std::string& id) {
  auto t = TemplatesFor(op);
  REQUIRE(t.ok());
  for (const OpTemplate* alt : t->alternatives)
    if (id == alt->id()) return true;
  return false;
}

// The op's output for one input tensor under the template's default policy.
std::vector<float> RunDefault(const char* template_id, const OpSpec& op, const Tensor& input) {
  const OpTemplate* t = TemplateById(template_id);
  REQUIRE(t);
  auto kernel = t->Build(op, t->DefaultPolicy(op));
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  REQUIRE(kernel.value()->Prepare({&input}).ok());
  REQUIRE(kernel.value()->Run().ok());
  Tensor out;
  REQUIRE(kernel.value()->Fetch(&out).ok());
  return out.data;
}

TEST_CASE("templates: Tanh and Gelu (erf and tanh forms) within 1e-6 of libm from -12 to 12, past the clamps") {
  Tensor x({24001});
  for (int64_t i = 0; i < x.size(); ++i) x.data[i] = -12.f + 0.001f * static_cast<float>(i);
  auto op = [](const char* type, const char* approximate) {
    std::string attr = approximate ? std::string(R"(,"attr":[{"name":"approximate","type":"str","value":")") + approximate + "\"}]" : "";
    return Op(std::string(R"({"op":")") + type + R"(","input_desc":)" + Desc({"[24001]"}) + R"(,"output_desc":)" + Desc({"[24001]"}) + attr + "}");
  };
  auto worst = [&](const OpSpec& spec, double (*f)(double)) {
    auto y = RunDefault("elementwise.generic", spec, x);
    double w = 0;
    for (int64_t i = 0; i < x.size(); ++i) w = std::max(w, std::fabs(y[i] - f(x.data[i])));
    return w;
  };
  CHECK(worst(op("Tanh", nullptr), [](double v) { return std::tanh(v); }) < 1e-6);
  CHECK(worst(op("Gelu", nullptr), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }) < 1e-6 * 12);
  CHECK(worst(op("Gelu", "tanh"), [](double v) { return 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))); }) <
        1e-6 * 12);
}

TEST_CASE("templates: softmax.simd, an Impl alternative for Softmax over the last axis, with a short last block of rows") {
  OpSpec op = Op(R"({"op":"Softmax","input_desc":)" + Desc({"[37,100]"}) + R"(,"output_desc":)" + Desc({"[37,100]"}) + "}");
  CHECK(HasAlternative(op, "softmax.simd"));
  CHECK(!HasAlternative(SameShapeOp("Softmax", "[3,7,40]", "axis", 1), "softmax.simd"));
  const OpTemplate* t = TemplateById("softmax.simd");
  auto runner = Runner::Create(op, 3);
  REQUIRE(runner.ok());
  for (const char* store : {"in_place", "streaming"}) {
    Policy policy = MakePolicy({{"parallel", int64_t{1}}, {"rows_per_task", int64_t{8}}, {"store", std::string(store)}, {"prefetch", int64_t{1}}});
    CAPTURE(store);
    auto kernel = t->Build(op, policy);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    RunResult r = runner->Check(*kernel.value());
    CHECK_MESSAGE(r.ok, r.failure);
  }
}

TEST_CASE("templates: softmax.rowwise writes a row or column with a NaN, a +inf or only -infs NaN throughout, the others finite") {
  const float inf = std::numeric_limits<float>::infinity();
  const OpTemplate* t = TemplateById("softmax.rowwise");
  REQUIRE(t);
  // [6, 40] along 40 (rows), and [6, 40, 3] along 40 (columns: 3 and 16 of them side by side).
  for (const auto& shape_inner : {std::pair<std::string, int64_t>{"[6,40]", 1}, {"[6,40,3]", 3}, {"[6,40,16]", 16}}) {
    const std::string& shape = shape_inner.first;
    const int64_t inner = shape_inner.second;  // not bindings: clang 14 lambdas (and CAPTURE) cannot capture those
    CAPTURE(shape);
    OpSpec op = SameShapeOp("Softmax", shape.c_str(), "axis", 1);
    const int64_t len = 40, slices = 6 * inner;
    auto at = [&](int64_t slice, int64_t a) { return (slice / inner * len + a) * inner + slice % inner; };
    Tensor x(op.inputs[0].shape);
    for (int64_t i = 0; i < x.size(); ++i) x.data[i] = static_cast<float>(i % 13) - 6.f;
    x.data[at(1, 7)] = std::nanf("");
    x.data[at(2, 30)] = inf;
    for (int64_t a = 0; a < len; ++a) x.data[at(3, a)] = -inf;
    auto kernel = t->Build(op, t->DefaultPolicy(op));
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    REQUIRE(kernel.value()->Prepare({&x}).ok());
    REQUIRE(kernel.value()->Run().ok());
    Tensor y;
    REQUIRE(kernel.value()->Fetch(&y).ok());
    for (int64_t s = 0; s < slices; ++s) {
      CAPTURE(s);
      double sum = 0;
      for (int64_t a = 0; a < len; ++a) {
        const float v = y.data[at(s, a)];
        if (s >= 1 && s <= 3) {
          CHECK(std::isnan(v));
        } else {
          CHECK(std::isfinite(v));
          sum += v;
        }
      }
      if (s < 1 || s > 3) CHECK(std::fabs(sum - 1) < 1e-5);
    }
  }
}

TEST_CASE("templates: oneDNN is an Impl alternative for vector ops, broadcasting only the second input") {
  auto binary = [](const char* type, const char* a, const char* b, const char* out) {
    return Op(std::string(R"({"op":")") + type + R"(","input_desc":)" + Desc({a, b}) + R"(,"output_desc":)" + Desc({out}) + "}");
  };
  std::vector<OpSpec> ops = {SameShapeOp("Softmax", "[3,7,40]", "axis", 1), binary("Add", "[7,3,40]", "[3,1]", "[7,3,40]"),
                             binary("Mul", "[3,1]", "[7,3,40]", "[7,3,40]"), binary("Div", "[4,33]", "[33]", "[4,33]"),
                             // Full dims then broadcast ones (a per-channel mean over an image), which
                             // impl.onednn runs as [1, full, rest]; and a broadcast between full dims.
                             binary("Sub", "[3,20,40]", "[3,1,1]", "[3,20,40]"), binary("Div", "[2,3,5,6]", "[2,3,1,1]", "[2,3,5,6]"),
                             binary("Mul", "[4,6,10]", "[4,1,10]", "[4,6,10]"),
                             // Swin's shifted-window mask over its heads, which oneDNN's JIT takes
                             // only with the dims merged ([4,3,35] against [4,1,35]); and alternating.
                             binary("Add", "[1,4,3,5,7]", "[1,4,1,5,7]", "[1,4,3,5,7]"), binary("Sub", "[2,3,4,5,6]", "[2,1,4,1,6]", "[2,3,4,5,6]"),
                             Op(R"({"op":"LayerNormalization","input_desc":)" + Desc({"[2,5,24]", "[5,24]"}) + R"(,"output_desc":)" +
                                Desc({"[2,5,24]"}) + R"(,"attr":[{"name":"axis","type":"int","value":1}]})"),
                             Op(R"({"op":"Gelu","input_desc":)" + Desc({"[9,70]"}) + R"(,"output_desc":)" + Desc({"[9,70]"}) +
                                R"(,"attr":[{"name":"approximate","type":"str","value":"tanh"}]})"),
                             // Global pooling: one window over every spatial axis.
                             Op(R"({"op":"GlobalAveragePool","input_desc":)" + Desc({"[1,5,7,9]"}) + R"(,"output_desc":)" + Desc({"[1,5,1,1]"}) + "}"),
                             Op(R"({"op":"GlobalAveragePool","input_desc":)" + Desc({"[2,4,3,11]"}) + R"(,"output_desc":)" + Desc({"[2,4,1,1]"}) + "}")};
  for (const OpSpec& op : ops) {
    CAPTURE(op.op_type);
    CHECK(HasAlternative(op, "impl.onednn"));
    CheckAllTemplates(op, 1);
  }
  OpSpec sub = binary("Sub", "[3,1]", "[7,3,40]", "[7,3,40]");
  CHECK(!HasAlternative(sub, "impl.onednn"));
  CHECK(TemplateById("impl.onednn")->Supports(sub).message().find("second input") != std::string::npos);
  CHECK(!HasAlternative(SameShapeOp("ReduceSum", "[3,50]", "noop_with_empty_axes", 1), "impl.onednn"));
}

TEST_CASE("templates: an unsupported operator or dtype is refused with its name") {
  auto t = TemplatesFor(Op(R"({"op":"Conv","input_desc":[{"shape":[1,3,5,5],"type":"float16"},{"shape":[3,3,1,1],"type":"float16"}],"output_desc":[{"shape":[1,3,5,5],"type":"float16"}]})"));
  REQUIRE(!t.ok());
  CHECK(t.status().message().find("float16") != std::string::npos);
  auto u = TemplatesFor(Op(R"({"op":"Einsum","name":"e1","input_desc":)" + Desc({"[2,2]"}) + R"(,"output_desc":)" + Desc({"[2,2]"}) + "}"));
  REQUIRE(!u.ok());
  CHECK(u.status().message().find("Einsum") != std::string::npos);
}

}  // namespace
}  // namespace tilebank::engine
