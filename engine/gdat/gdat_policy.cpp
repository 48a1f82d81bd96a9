#include "engine/gdat/gdat_policy.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/gdat/fusion_plan.h"
#include "engine/gdat/gradient_profile.h"

namespace tilebank::engine {

namespace {

std::string IntsText(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

const Knob* Find(const Policy& policy, const char* name) {
  for (const Knob& k : policy)
    if (k.name == name) return &k;
  return nullptr;
}

// Gradient sizes in bytes, from a canonical grad descriptor; nullopt when it is not one, or holds
// a dtype gradients do not have.
std::optional<std::vector<int64_t>> GradientBytes(const std::string& descriptor) {
  auto j = nlohmann::json::parse(descriptor, nullptr, false);
  if (j.is_discarded() || !j.contains("grads") || !j["grads"].is_array()) return std::nullopt;
  std::vector<int64_t> bytes;
  for (const auto& g : j["grads"]) {
    const int64_t size = g.is_object() && g.value("dtype", nlohmann::json()).is_string() ? GradientDtypeBytes(g["dtype"].get<std::string>()) : 0;
    if (size == 0 || !g.value("numel", nlohmann::json()).is_number_integer()) return std::nullopt;
    bytes.push_back(g["numel"].get<int64_t>() * size);
  }
  return bytes;
}

std::string RealsText(const std::vector<double>& values) {
  std::string text;
  char buffer[32];
  for (double v : values) {
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    text += (text.empty() ? "" : ",") + std::string(buffer);
  }
  return text;
}

// "0.8,1.25" as numbers; nullopt for anything else.
std::optional<std::vector<double>> ParseReals(const std::string& text) {
  std::vector<double> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    double v = 0;
    const auto [end, error] = std::from_chars(text.data() + at, text.data() + comma, v);
    if (error != std::errc() || end != text.data() + comma || v < 0) return std::nullopt;
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

}  // namespace

Policy GradPolicy::Knobs() const {
  std::vector<int64_t> ends_as_ints(ends.begin(), ends.end());
  Policy knobs = {{"baseline_hangover_ms", baseline_hangover_ms},
                  {"ends", IntsText(ends_as_ints)},
                  {"hangover_ms", hangover_ms}};
  if (!ready_ms.empty()) knobs.push_back({"ready_ms", RealsText(ready_ms)});
  knobs.push_back({"segment_bytes", IntsText(segment_bytes)});
  knobs.push_back({"verified", verified});
  return knobs;
}

std::string GradPolicyProblem(const std::string& descriptor, const Policy& policy) {
  const auto bytes = GradientBytes(descriptor);
  if (!bytes) return "descriptor: not a canonical gradient descriptor of float or integer gradients";
  const Knob* ends = Find(policy, "ends");
  const Knob* sizes = Find(policy, "segment_bytes");
  if (!ends || !std::holds_alternative<std::string>(ends->value)) return std::string("the policy of ") + kGradTemplateId + " has no knob 'ends'";
  auto parsed = ParseEnds(std::get<std::string>(ends->value), bytes->size());
  if (!parsed.ok()) return "knob 'ends': " + parsed.status().message();
  if (sizes) {
    if (!std::holds_alternative<std::string>(sizes->value)) return "knob 'segment_bytes' must be a list";
    const std::vector<int64_t> expected = SegmentBytes(*parsed, *bytes);
    if (std::get<std::string>(sizes->value) != IntsText(expected))
      return "knob 'segment_bytes' = " + std::get<std::string>(sizes->value) + " is not the segments' sizes (" + IntsText(expected) + ")";
  }
  if (const Knob* r = Find(policy, "ready_ms")) {
    const auto times = std::holds_alternative<std::string>(r->value) ? ParseReals(std::get<std::string>(r->value)) : std::nullopt;
    if (!times || times->size() != bytes->size()) return "knob 'ready_ms' must list one ready time >= 0 per gradient";
  }
  if (const Knob* v = Find(policy, "verified"); v && (!std::holds_alternative<std::string>(v->value) ||
                                                     (std::get<std::string>(v->value) != "model" && std::get<std::string>(v->value) != "measured")))
    return "knob 'verified' must be 'model' or 'measured'";
  return {};
}

std::optional<GradPolicy> ParseGradPolicy(const Entry& entry) {
  if (entry.template_id != kGradTemplateId || !GradPolicyProblem(entry.descriptor, entry.policy).empty()) return std::nullopt;
  const auto bytes = GradientBytes(entry.descriptor);
  GradPolicy p;
  p.ends = *ParseEnds(std::get<std::string>(Find(entry.policy, "ends")->value), bytes->size());
  p.segment_bytes = SegmentBytes(p.ends, *bytes);
  auto number = [&](const char* name) {
    const Knob* k = Find(entry.policy, name);
    if (!k) return 0.0;
    if (const double* d = std::get_if<double>(&k->value)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&k->value)) return static_cast<double>(*i);
    return 0.0;
  };
  p.hangover_ms = number("hangover_ms");
  p.baseline_hangover_ms = number("baseline_hangover_ms");
  if (const Knob* r = Find(entry.policy, "ready_ms")) p.ready_ms = *ParseReals(std::get<std::string>(r->value));
  if (const Knob* v = Find(entry.policy, "verified")) p.verified = std::get<std::string>(v->value);
  return p;
}

}  // namespace tilebank::engine
