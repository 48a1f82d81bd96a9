// A bank entry's policy is checked against the search space its template gives for the entry's
// own operator: unknown, missing and out-of-domain knobs and broken constraints are named.
#include "engine/catalog/policy_check.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/catalog/template_registry.h"
#include "engine/core/host_facts.h"
#include "engine/backends/op_template.h"
#include "repo/canonical.h"

namespace tilebank::engine {
namespace {

const char* kMatMul = R"({"op":"MatMul","input_desc":[{"shape":[64,96],"type":"float32"},{"shape":[96,128],"type":"float32"}],
                         "output_desc":[{"shape":[64,128],"type":"float32"}]})";

Entry EntryFor(const std::string& template_id, const Policy& policy) {
  auto d = CanonicalizeOp(nlohmann::json::parse(kMatMul));
  REQUIRE(d.ok());
  Entry e;
  e.kind = EntryKind::kOp;
  e.op_type = d->op_type;
  e.descriptor = d->text;
  e.template_id = template_id;
  e.policy = policy;
  return e;
}

Policy DefaultOf(const std::string& template_id) {
  auto op = ParseOpSpec(nlohmann::json::parse(kMatMul), 0);
  REQUIRE(op.ok());
  return TemplateById(template_id)->DefaultPolicy(*op);
}

Policy With(Policy p, const std::string& name, KnobValue value) {
  p.erase(std::remove_if(p.begin(), p.end(), [&](const Knob& k) { return k.name == name; }), p.end());
  p.push_back({name, value});
  return MakePolicy(p);
}

TEST_CASE("policy check: the default policy of each template is valid, other knobs are named") {
  for (const char* id : {"matmul.tiled", "impl.onednn", "impl.openblas"}) {
    CAPTURE(id);
    CHECK(PolicyProblem(EntryFor(id, DefaultOf(id))) == "");
  }
  const Policy good = DefaultOf("matmul.tiled");
  const std::string unknown = PolicyProblem(EntryFor("matmul.tiled", With(good, "tile_k", int64_t{128})));
  CHECK(unknown.find("knob 'tile_k' is not a knob of matmul.tiled") != std::string::npos);
  CHECK(unknown.find("block_m") != std::string::npos);  // the template's knobs are listed

  Policy missing = good;
  missing.erase(missing.begin());
  CHECK(PolicyProblem(EntryFor("matmul.tiled", missing)).find("knob '" + good.front().name + "' of matmul.tiled is missing") != std::string::npos);

  const std::string outside = PolicyProblem(EntryFor("matmul.tiled", With(good, "tile_m", int64_t{7777})));
  CHECK(outside.find("knob 'tile_m' = 7777 is outside its domain") != std::string::npos);

  CHECK(PolicyProblem(EntryFor("impl.openblas", {{"library", std::string("onednn")}})).find("only policy") != std::string::npos);
}

TEST_CASE("policy check: a template this build does not know is left to StaleReason, a wrong op type is a problem") {
  CHECK(PolicyProblem(EntryFor("no.such.template", {{"x", int64_t{1}}})) == "");
  CHECK(PolicyProblem(EntryFor("softmax.rowwise", DefaultOf("matmul.tiled"))).find("cannot run this operator") != std::string::npos);
}

}  // namespace
}  // namespace tilebank::engine

namespace tilebank::engine {
namespace {

TEST_CASE("policy check: a bank's policies are judged by its soc_version's target, not by the host") {
  // 8 rows of 3 sixteen-float vectors: 28 of AVX-512's 32 registers, more than AVX2's 16.
  const Policy wide = MakePolicy({{"vec_blocks", int64_t{3}}, {"tile_m", int64_t{8}}, {"block_n", int64_t{1}}, {"block_m", int64_t{1}},
                                  {"unroll_k", int64_t{1}}, {"loop_order", std::string("mn")}, {"parallel", int64_t{0}},
                                  {"pack_b", std::string("block")}});
  const Entry entry = EntryFor("matmul.tiled", wide);
  CHECK(EnginePolicyCheck("x86_64-intel-model167-avx512-2c")(entry) == "");
  CHECK(EnginePolicyCheck("x86_64-amd-zen3-avx2-2c")(entry).find("breaks matmul.tiled's constraints") != std::string::npos);
  // Whatever the host is, the default policy of an AVX2 target is valid for an AVX2 bank.
  {
    JudgedTarget avx2("x86_64-amd-zen3-avx2-2c");
    const Entry avx2_default = EntryFor("matmul.tiled", DefaultOf("matmul.tiled"));
    CHECK(EnginePolicyCheck("x86_64-amd-zen3-avx2-2c")(avx2_default) == "");
  }
}

}  // namespace
}  // namespace tilebank::engine
