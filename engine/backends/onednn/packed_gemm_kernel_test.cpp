// The own packed GEMM against a product in double: rows fewer than a tile, a tile and a part, many;
// columns fewer than a panel, a panel and a part; B row-major and transposed, constant (packed at
// bind) or computed by the model (packed on each run); alpha, a Gemm's C of one value or a row;
// Adds of a row folded into the bias, constant or given per run; each activation (Gelu with erf)
// after a residual Add or alone; the measured path and the direct one, on one thread and three;
// what it refuses; and impl.onednn's built-in choice ("auto") computing the same product.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/backends/library_impls.h"
#include "engine/backends/onednn/packed_gemm_kernel.h"
#include "engine/core/op_spec.h"
#include "engine/core/threads.h"

namespace tilebank::engine {
namespace {

Tensor Filled(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t(std::move(shape));
  for (float& v : t.data) v = static_cast<float>((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.f * 2.f - 1.f;
  return t;
}

double Activated(const std::string& a, double x) {
  if (a == "Relu") return std::max(x, 0.0);
  if (a == "Gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (a == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (a == "Tanh") return std::tanh(x);
  return x;
}

struct Case {
  int64_t batch, M, K, N;
  bool trans_b;
  float alpha, beta;
  BiasShape bias;
};

TEST_CASE("own packed GEMM: products of every edge, B packed at bind or per run, its epilogue fused, against double") {
  const std::vector<Case> cases = {{1, 1, 1, 1, false, 1.f, 1.f, BiasShape::kNone},    {1, 5, 3, 7, true, 1.f, 1.f, BiasShape::kRow},
                                   {2, 7, 64, 17, false, 0.5f, 1.f, BiasShape::kNone}, {1, 13, 300, 33, true, 1.f, 2.f, BiasShape::kScalar},
                                   {1, 64, 96, 100, false, 1.f, 0.5f, BiasShape::kRow}, {3, 6, 17, 16, false, 1.f, 1.f, BiasShape::kNone},
                                   {1, 13, 9000, 40, true, 1.f, 1.f, BiasShape::kRow},   // K in chunks: B too large to stay in cache
                                   {1, 530, 8200, 3, false, 1.f, 1.f, BiasShape::kNone}};  // and the rows in groups, their sums between chunks on the stack
  for (int threads : {1, 3}) {
    SetLibraryThreads(threads);
    for (size_t k = 0; k < cases.size(); ++k)
      for (bool residual : {false, true})
        for (const std::string activation : {"", "Relu", "Gelu", "Sigmoid", "Tanh"})
          for (bool constant_b : {true, false}) {
            CAPTURE(threads);
            CAPTURE(k);
            CAPTURE(residual);
            CAPTURE(activation);
            CAPTURE(constant_b);
            const Case& c = cases[k];
            GemmProblem p;
            p.batch = c.batch, p.M = c.M, p.K = c.K, p.N = c.N, p.trans_b = c.trans_b, p.alpha = c.alpha, p.beta = c.beta, p.bias = c.bias;
            p.a_batched = c.batch > 1;
            const std::vector<int64_t> out_shape = c.batch > 1 ? std::vector<int64_t>{c.batch, c.M, c.N} : std::vector<int64_t>{c.M, c.N};
            std::vector<Tensor> in = {Filled(c.batch > 1 ? std::vector<int64_t>{c.batch, c.M, c.K} : std::vector<int64_t>{c.M, c.K}, 1),
                                      Filled(c.trans_b ? std::vector<int64_t>{c.N, c.K} : std::vector<int64_t>{c.K, c.N}, 2)};
            if (c.bias != BiasShape::kNone) in.push_back(Filled(c.bias == BiasShape::kScalar ? std::vector<int64_t>{1} : std::vector<int64_t>{c.N}, 3));
            const size_t anchor_inputs = in.size();
            std::vector<ChainStep> chain = {{"Add", 0, 0, true, {c.N}}};  // a Linear's bias
            in.push_back(Filled({c.N}, 4));
            if (residual) chain.push_back({"Add", 0, 0, true, out_shape}), in.push_back(Filled(out_shape, 5));
            if (!activation.empty()) chain.push_back({activation, 0, 0, false, {}});
            // The product in double.
            const int64_t rows = c.batch * c.M;
            std::vector<double> want(static_cast<size_t>(rows * c.N));
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t n = 0; n < c.N; ++n) {
                double sum = 0;
                for (int64_t i = 0; i < c.K; ++i) sum += double(in[0].data[r * c.K + i]) * in[1].data[c.trans_b ? n * c.K + i : i * c.N + n];
                double y = c.alpha * sum + in[anchor_inputs].data[n];
                if (c.bias != BiasShape::kNone) y += c.beta * in[2].data[c.bias == BiasShape::kScalar ? 0 : n];
                if (residual) y += in[anchor_inputs + 1].data[r * c.N + n];
                want[r * c.N + n] = Activated(activation, y);
              }
            const double tolerance = 1e-4 * std::max<int64_t>(1, c.K / 300);  // float32's rounding grows with K
            auto worst = [&](const float* got) {
              double w = 0;
              for (size_t i = 0; i < want.size(); ++i) w = std::max(w, std::abs(got[i] - want[i]));
              return w;
            };
            std::vector<const Tensor*> values;
            for (const Tensor& t : in) values.push_back(&t);
            auto made = OwnPackedGemmKernel(p, out_shape, anchor_inputs, chain);
            REQUIRE_MESSAGE(made.ok(), made.status().message());
            Kernel& kernel = **made;
            REQUIRE(kernel.Prepare(values).ok());
            REQUIRE(kernel.Run().ok());
            Tensor out;
            REQUIRE(kernel.Fetch(&out).ok());
            CHECK(out.shape == out_shape);
            CHECK(worst(out.data.data()) < tolerance);
            // Direct: the weights and the bias row constant or given per run; the output over the residual.
            std::vector<const Tensor*> constants(in.size(), nullptr);
            if (constant_b) constants[1] = &in[1], constants[anchor_inputs] = &in[anchor_inputs];
            if (c.bias != BiasShape::kNone && constant_b) constants[2] = &in[2];  // a Gemm's C given per run too
            std::vector<std::vector<int64_t>> shapes;
            for (const Tensor& t : in) shapes.push_back(t.shape);
            auto direct = OwnPackedGemmKernel(p, out_shape, anchor_inputs, chain);
            REQUIRE(direct.ok());
            REQUIRE((*direct)->BindDirect(shapes, constants).value());
            std::vector<float> y = residual ? in[anchor_inputs + 1].data : std::vector<float>(want.size());
            if (residual && rows > 1) CHECK((*direct)->InPlaceInput() == static_cast<int>(anchor_inputs + 1));  // 1x1: a row, in the bias
            std::vector<const float*> run(in.size(), nullptr);
            for (size_t i = 0; i < in.size(); ++i)
              if (!constants[i]) run[i] = in[i].data.data();
            if (residual) run[anchor_inputs + 1] = y.data();  // in place
            for (int repeat = 0; repeat < 2; ++repeat) {  // a run-time bias row is not added twice
              if (residual && repeat) y = in[anchor_inputs + 1].data;
              REQUIRE((*direct)->RunDirect(run, y.data()).ok());
              CHECK(worst(y.data()) < tolerance);
            }
          }
  }
  SetLibraryThreads(1);
}

TEST_CASE("own packed GEMM: what it does not run is refused, naming it") {
  GemmProblem p;
  p.M = 4, p.K = 8, p.N = 8;
  CHECK(OwnPackedGemmRefuses(p, {}, {4, 8}).empty());
  GemmProblem batched_b = p;
  batched_b.b_batched = true, batched_b.batch = 2;
  CHECK(OwnPackedGemmRefuses(batched_b, {}, {2, 4, 8}).find("batch axis") != std::string::npos);
  GemmProblem trans_a = p;
  trans_a.trans_a = true;
  CHECK(OwnPackedGemmRefuses(trans_a, {}, {4, 8}).find("transposed") != std::string::npos);
  GemmProblem full_c = p;
  full_c.bias = BiasShape::kFull;
  CHECK(OwnPackedGemmRefuses(full_c, {}, {4, 8}).find("one row") != std::string::npos);
  CHECK(OwnPackedGemmRefuses(p, {{"Mul", 0, 0, true, {8}}}, {4, 8}).find("Mul") != std::string::npos);
  CHECK(OwnPackedGemmRefuses(p, {{"Relu", 0, 0, false, {}}, {"Add", 0, 0, true, {8}}}, {4, 8}).find("row") != std::string::npos);
  CHECK_FALSE(OwnPackedGemmKernel(p, {4, 8}, 2, {{"Erf", 0, 0, false, {}}}).ok());
}

TEST_CASE("own packed GEMM: impl.onednn offers it for a product, and its built-in choice computes the product") {
  auto op = ParseOpSpec(nlohmann::json{{"op", "MatMul"},
                                       {"input_desc", {{{"shape", {24, 40}}, {"type", "float32"}}, {{"shape", {40, 56}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", {24, 56}}, {"type", "float32"}}}}},
                        0);
  REQUIRE(op.ok());
  const SearchSpace space = OneDnnImpl().Space(*op);
  const int algo = space.IndexOf("algo");
  REQUIRE(algo >= 0);
  const auto& values = space.knobs[static_cast<size_t>(algo)].values;
  for (const char* v : {"auto", "direct", kOwnPackedGemmAlgo}) CHECK(std::find(values.begin(), values.end(), KnobValue(std::string(v))) != values.end());
  CHECK(PolicyText(OneDnnImpl().DefaultPolicy(*op)) == "algo=auto,impl=default");
  // A policy from before the knob (no algo) is oneDNN's ("direct"), and keeps its text.
  Config config;
  const Policy old = MakePolicy({{"impl", std::string("default")}});
  REQUIRE(space.ConfigOf(old, &config));
  CHECK(space.PolicyOf(config) == old);
  REQUIRE(space.ConfigOf(OneDnnImpl().DefaultPolicy(*op), &config));
  // A product the own kernel refuses (B with a batch axis) keeps "auto" and "direct" in its space.
  auto batched = ParseOpSpec(nlohmann::json{{"op", "MatMul"},
                                            {"input_desc", {{{"shape", {2, 4, 8}}, {"type", "float32"}}, {{"shape", {2, 8, 5}}, {"type", "float32"}}}},
                                            {"output_desc", {{{"shape", {2, 4, 5}}, {"type", "float32"}}}}},
                             0);
  REQUIRE(batched.ok());
  CHECK(OneDnnImpl().Space(*batched).ConfigOf(OneDnnImpl().DefaultPolicy(*batched), &config));
  CHECK(OneDnnImpl().Space(*batched).ConfigOf(old, &config));
  const Tensor a = Filled({24, 40}, 7), b = Filled({40, 56}, 8);
  for (const char* algo_value : {"auto", kOwnPackedGemmAlgo, "direct"}) {
    CAPTURE(algo_value);
    auto kernel = OneDnnImpl().Build(*op, MakePolicy({{"algo", std::string(algo_value)}, {"impl", std::string("default")}}));
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
    REQUIRE((*kernel)->Prepare({&a, &b}).ok());
    REQUIRE((*kernel)->Run().ok());
    Tensor out;
    REQUIRE((*kernel)->Fetch(&out).ok());
    double worst = 0;
    for (int64_t m = 0; m < 24; ++m)
      for (int64_t n = 0; n < 56; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < 40; ++k) sum += double(a.data[m * 40 + k]) * b.data[k * 56 + n];
        worst = std::max(worst, std::abs(out.data[m * 56 + n] - sum));
      }
    CHECK(worst < 1e-4);
    if (std::string(algo_value) == kOwnPackedGemmAlgo) CHECK((*kernel)->Identity().find("own packed GEMM") == 0);
  }
}


TEST_CASE("own packed GEMM: a constant A or residual bound once, and a run-time B bound to the kernel given for it") {
  GemmProblem p;
  p.M = 7, p.K = 9, p.N = 21;
  const Tensor a = Filled({7, 9}, 11), b = Filled({9, 21}, 12), z = Filled({7, 21}, 13);
  std::vector<double> want(7 * 21);
  for (int64_t m = 0; m < 7; ++m)
    for (int64_t n = 0; n < 21; ++n) {
      double sum = z.data[m * 21 + n];
      for (int64_t k = 0; k < 9; ++k) sum += double(a.data[m * 9 + k]) * b.data[k * 21 + n];
      want[m * 21 + n] = sum;
    }
  const std::vector<ChainStep> chain = {{"Add", 0, 0, true, {7, 21}}};
  auto made = OwnPackedGemmKernel(p, {7, 21}, 2, chain);
  REQUIRE(made.ok());
  REQUIRE((*made)->BindDirect({{7, 9}, {9, 21}, {7, 21}}, {&a, &b, &z}).value());  // everything constant: given null on each run
  std::vector<float> y(7 * 21);
  REQUIRE((*made)->RunDirect({nullptr, nullptr, nullptr}, y.data()).ok());
  double worst = 0;
  for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(y[i] - want[i]));
  CHECK(worst < 1e-4);
  // A B computed by the model goes to the kernel made for it; a constant B stays here.
  struct Marker : Kernel {
    Status Prepare(const std::vector<const Tensor*>&) override { return Status::Ok(); }
    Status Run() override { return Status::Ok(); }
    Status Fetch(Tensor*) override { return Status::Ok(); }
    Result<bool> BindDirect(const std::vector<std::vector<int64_t>>&, const std::vector<const Tensor*>&) override { return true; }
    Status RunDirect(const std::vector<const float*>&, float* out) override {
      out[0] = 12345.f;
      return Status::Ok();
    }
    std::string Identity() const override { return "marker"; }
  };
  int made_instead = 0;
  auto delegating = OwnPackedGemmKernel(p, {7, 21}, 2, chain, [&] {
    ++made_instead;
    return std::unique_ptr<Kernel>(new Marker);
  });
  REQUIRE(delegating.ok());
  REQUIRE((*delegating)->BindDirect({{7, 9}, {9, 21}, {7, 21}}, {nullptr, nullptr, nullptr}).value());
  CHECK(made_instead == 1);
  CHECK((*delegating)->Identity() == "marker");
  REQUIRE((*delegating)->RunDirect({a.data.data(), b.data.data(), z.data.data()}, y.data()).ok());
  CHECK(y[0] == 12345.f);
  REQUIRE((*delegating)->BindDirect({{7, 9}, {9, 21}, {7, 21}}, {nullptr, &b, nullptr}).value());
  CHECK(made_instead == 1);
  CHECK((*delegating)->Identity().find("own packed GEMM") == 0);
  REQUIRE((*delegating)->RunDirect({a.data.data(), nullptr, z.data.data()}, y.data()).ok());
  worst = 0;
  for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(y[i] - want[i]));
  CHECK(worst < 1e-4);
}

TEST_CASE("own packed GEMM: chosen where the rival cannot run the product, never where it refuses it") {
  struct Unmade : Kernel {
    Status Prepare(const std::vector<const Tensor*>&) override { return Status::InvalidInput("this rival runs nothing"); }
    Status Run() override { return Status::Ok(); }
    Status Fetch(Tensor*) override { return Status::Ok(); }
  };
  auto unmade = [] { return std::unique_ptr<Kernel>(new Unmade); };
  auto op = ParseOpSpec(nlohmann::json{{"op", "MatMul"},
                                       {"input_desc", {{{"shape", {7, 13}}, {"type", "float32"}}, {{"shape", {13, 9}}, {"type", "float32"}}}},
                                       {"output_desc", {{{"shape", {7, 9}}, {"type", "float32"}}}}},
                        0);
  REQUIRE(op.ok());
  CHECK(OwnPackedGemmRunsFaster(*op, {{"Add", 0, 0, true, {7, 9}}}, unmade));
  CHECK_FALSE(OwnPackedGemmRunsFaster(*op, {{"Mul", 0, 0, true, {7, 9}}}, unmade));  // a chain it does not fuse
}

}  // namespace
}  // namespace tilebank::engine
