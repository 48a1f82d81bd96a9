// A schedule template's search space: named knobs, each with a finite domain, and a validity
// constraint over whole policies. A Config picks one value index per knob; a Policy is the
// named form stored in the bank (repo/entry.h Knob, sorted by name).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "repo/entry.h"

namespace tilebank::engine {

using Policy = std::vector<Knob>;  // sorted by name
using KnobValue = std::variant<int64_t, double, std::string>;
using Config = std::vector<int>;   // one index per knob of the space, in the space's knob order

struct KnobDomain {
  std::string name;
  std::vector<KnobValue> values;
  TuneMode mode = TuneMode::kSchedule;  // Schedule knobs shape loops; Format knobs pick a data layout
  // Set: the value a policy without this knob has. A policy never spells it (PolicyOf leaves the
  // knob out), so that policies from before the knob existed stay valid and keep their text.
  std::optional<KnobValue> unset;
};

class SearchSpace {
 public:
  std::vector<KnobDomain> knobs;
  // True when a whole policy may be built (register budget, tile fits the shape, ...).
  std::function<bool(const Policy&)> valid = [](const Policy&) { return true; };

  size_t size() const { return knobs.size(); }
  // Number of configurations before constraints.
  uint64_t Cardinality() const;
  Policy PolicyOf(const Config& config) const;
  // The config of a policy; false when a knob is missing (and has no unset value) or its value is
  // outside the domain.
  bool ConfigOf(const Policy& policy, Config* config) const;
  // `policy` with knob `name` at `value`, in PolicyOf's form (a knob at its unset value left out).
  Policy With(Policy policy, const std::string& name, const KnobValue& value) const;
  bool IsValid(const Config& config) const { return valid(PolicyOf(config)); }
  // Canonical text of a config ("a=1,b=x"), for visited sets and messages.
  std::string Describe(const Config& config) const;
  int IndexOf(const std::string& knob) const;
  // This space with every knob not of `mode` pinned to its value in `base` (Schedule mode
  // searches loops with the layout of the default policy).
  SearchSpace PinnedExcept(TuneMode mode, const Policy& base) const;
  // Every valid config, in index order (only for spaces small enough to list).
  std::vector<Config> ValidConfigs() const;
};

// A numeric knob's domain: IntValues({1, 2, 4}).
std::vector<KnobValue> IntValues(std::initializer_list<int64_t> values);

// Policy accessors used by templates.
int64_t IntKnob(const Policy& policy, const std::string& name, int64_t fallback);
std::string TextKnob(const Policy& policy, const std::string& name, const std::string& fallback);
std::string PolicyText(const Policy& policy);    // "a=1,b=x" in name order
std::string KnobValueText(const KnobValue& v);  // "12", "0.500000", "nm"
Policy MakePolicy(std::vector<Knob> knobs);    // sorts by name

}  // namespace tilebank::engine
