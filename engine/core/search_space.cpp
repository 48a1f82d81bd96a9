#include "engine/core/search_space.h"

#include <algorithm>

namespace tilebank::engine {

std::string KnobValueText(const KnobValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return std::to_string(*d);
  return std::get<std::string>(v);
}

uint64_t SearchSpace::Cardinality() const {
  uint64_t n = 1;
  for (const auto& k : knobs) n *= k.values.size();
  return n;
}

Policy SearchSpace::PolicyOf(const Config& config) const {
  std::vector<Knob> out;
  for (size_t i = 0; i < knobs.size(); ++i)
    if (knobs[i].values[config[i]] != knobs[i].unset) out.push_back({knobs[i].name, knobs[i].values[config[i]]});
  return MakePolicy(std::move(out));
}

Policy SearchSpace::With(Policy policy, const std::string& name, const KnobValue& value) const {
  const int index = IndexOf(name);
  std::erase_if(policy, [&](const Knob& k) { return k.name == name; });
  if (index < 0 || value != knobs[index].unset) policy.push_back({name, value});
  return MakePolicy(std::move(policy));
}

bool SearchSpace::ConfigOf(const Policy& policy, Config* config) const {
  config->assign(knobs.size(), 0);
  for (size_t i = 0; i < knobs.size(); ++i) {
    auto it = std::find_if(policy.begin(), policy.end(), [&](const Knob& k) { return k.name == knobs[i].name; });
    if (it == policy.end() && !knobs[i].unset) return false;
    auto v = std::find(knobs[i].values.begin(), knobs[i].values.end(), it == policy.end() ? *knobs[i].unset : it->value);
    if (v == knobs[i].values.end()) return false;
    (*config)[i] = static_cast<int>(v - knobs[i].values.begin());
  }
  return true;
}

std::string SearchSpace::Describe(const Config& config) const { return PolicyText(PolicyOf(config)); }

int SearchSpace::IndexOf(const std::string& knob) const {
  for (size_t i = 0; i < knobs.size(); ++i)
    if (knobs[i].name == knob) return static_cast<int>(i);
  return -1;
}

SearchSpace SearchSpace::PinnedExcept(TuneMode mode, const Policy& base) const {
  SearchSpace r = *this;
  for (auto& k : r.knobs) {
    if (k.mode == mode) continue;
    if (k.unset) k.values = {*k.unset};  // a policy without the knob: at its unset value
    for (const auto& b : base)
      if (b.name == k.name) k.values = {b.value};
  }
  return r;
}

std::vector<Config> SearchSpace::ValidConfigs() const {
  std::vector<Config> out;
  Config c(knobs.size(), 0);
  for (uint64_t n = 0; n < Cardinality(); ++n) {
    if (IsValid(c)) out.push_back(c);
    for (size_t i = 0; i < c.size(); ++i) {
      if (++c[i] < static_cast<int>(knobs[i].values.size())) break;
      c[i] = 0;
    }
  }
  return out;
}

int64_t IntKnob(const Policy& policy, const std::string& name, int64_t fallback) {
  for (const auto& k : policy)
    if (k.name == name && std::holds_alternative<int64_t>(k.value)) return std::get<int64_t>(k.value);
  return fallback;
}

std::string TextKnob(const Policy& policy, const std::string& name, const std::string& fallback) {
  for (const auto& k : policy)
    if (k.name == name && std::holds_alternative<std::string>(k.value)) return std::get<std::string>(k.value);
  return fallback;
}

std::string PolicyText(const Policy& policy) {
  std::string s;
  for (const auto& k : policy) {
    if (!s.empty()) s += ',';
    s += k.name + "=" + KnobValueText(k.value);
  }
  return s;
}

Policy MakePolicy(std::vector<Knob> knobs) {
  std::sort(knobs.begin(), knobs.end(), [](const Knob& a, const Knob& b) { return a.name < b.name; });
  return knobs;
}

std::vector<KnobValue> IntValues(std::initializer_list<int64_t> values) { return {values.begin(), values.end()}; }

}  // namespace tilebank::engine
