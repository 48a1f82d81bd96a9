// Measures chosen policies of one operator side by side, round robin, through the tuner's runner
// (each kernel checked against the reference first):
//
//   build/policy_bench --ops bench/opat_suite.json --name softmax_8192x2048 default exp_store=inline
//   build/policy_bench --ops F --name N --template impl.onednn default
//
// A policy is "default" or knob=value pairs ("parallel=0,vector=2") over the template's default
// policy; a value must be one of the knob's values in the space, and the whole policy valid.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "bench/space_table_format.h"
#include "engine/catalog/template_registry.h"
#include "engine/backends/op_template.h"
#include "engine/tuning/runner.h"

namespace {

using namespace tilebank;

// `text` applied over `base`; an unknown knob or value is an error naming the allowed ones.
Result<engine::Policy> ParsePolicy(const std::string& text, const engine::SearchSpace& space, engine::Policy base) {
  if (text == "default") return base;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = std::min(text.find(',', pos), text.size());
    std::string pair = text.substr(pos, comma - pos);
    pos = comma + 1;
    size_t eq = pair.find('=');
    if (eq == std::string::npos) return Status::InvalidInput("'" + pair + "' is not knob=value");
    std::string name = pair.substr(0, eq), value = pair.substr(eq + 1);
    int index = space.IndexOf(name);
    if (index < 0) return Status::InvalidInput("the template has no knob '" + name + "'");
    const auto& domain = space.knobs[index];
    auto match = std::find_if(domain.values.begin(), domain.values.end(), [&](const auto& v) { return engine::KnobValueText(v) == value; });
    if (match == domain.values.end()) {
      std::string allowed;
      for (const auto& v : domain.values) allowed += (allowed.empty() ? "" : " ") + engine::KnobValueText(v);
      return Status::InvalidInput("knob " + name + " takes one of: " + allowed);
    }
    for (auto& knob : base)
      if (knob.name == name) knob.value = *match;
  }
  if (!space.valid(base)) return Status::InvalidInput(engine::PolicyText(base) + " is not a valid policy for this operator");
  return base;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Measure chosen policies of one operator side by side");
  std::string ops_file, name, template_id;
  std::vector<std::string> policy_texts;
  int rounds = 3;
  app.add_option("--ops", ops_file, "ATC-style operator list")->required()->check(CLI::ExistingFile);
  app.add_option("--name", name, "the operator's name in the list")->required();
  app.add_option("--template", template_id, "template or library id (default: the operator's primary template)");
  app.add_option("--rounds", rounds, "round-robin rounds")->check(CLI::Range(1, 100));
  app.add_option("policies", policy_texts, "\"default\" or knob=value,...")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 2;
  };
  auto description = bench::FindOpDescription(ops_file, name);
  if (!description.ok()) return fail(description.status());
  auto op = engine::ParseOpSpec(description.value(), 0);
  if (!op.ok()) return fail(op.status().WithContext(ops_file));
  auto templates = engine::TemplatesFor(op.value());
  if (!templates.ok()) return fail(templates.status());
  const engine::OpTemplate* t = templates->primary;
  if (!template_id.empty()) {
    t = engine::TemplateById(template_id);
    if (!t) return fail(Status::InvalidInput("no template " + template_id));
    if (Status s = t->Supports(op.value()); !s.ok()) return fail(s);
  }
  const engine::SearchSpace space = t->Space(op.value());
  auto runner = engine::Runner::Create(op.value());
  if (!runner.ok()) return fail(runner.status());

  std::vector<std::unique_ptr<engine::Kernel>> kernels;
  std::vector<std::string> labels;
  for (const auto& text : policy_texts) {
    auto policy = ParsePolicy(text, space, t->DefaultPolicy(op.value()));
    if (!policy.ok()) return fail(policy.status().WithContext(text));
    auto kernel = t->Build(op.value(), policy.value());
    if (!kernel.ok()) return fail(kernel.status().WithContext(text));
    engine::RunResult check = runner->Check(*kernel.value());
    if (!check.ok) return fail(Status::InvalidInput(text + ": " + check.failure));
    kernels.push_back(std::move(kernel.value()));
    labels.push_back(engine::PolicyText(policy.value()));
  }
  engine::RunOptions options;
  options.warmup = 3, options.min_samples = 15, options.target_seconds = 0.3;
  std::vector<double> best(kernels.size(), INFINITY);
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < kernels.size(); ++i) {
      engine::RunResult r = runner->Measure(*kernels[i], options);
      if (!r.ok) return fail(Status::InvalidInput(labels[i] + ": " + r.failure));
      best[i] = std::min(best[i], r.time.median_us);
      std::printf("round %d  %10.1f us  spread %7.1f  %s %s\n", round, r.time.median_us, r.time.spread_us, t->id(), labels[i].c_str());
    }
  std::printf("\nbest round median (us), %s\n", name.c_str());
  for (size_t i = 0; i < kernels.size(); ++i) std::printf("%12.1f  %s %s\n", best[i], t->id(), labels[i].c_str());
  return 0;
}
