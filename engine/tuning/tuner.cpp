#include "engine/tuning/tuner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/catalog/builtin_choice.h"
#include "engine/catalog/policy_check.h"
#include "engine/catalog/template_registry.h"
#include "engine/core/op_semantics.h"
#include "engine/backends/op_template.h"
#include "engine/runtime/executor.h"
#include "engine/tuning/search_loop.h"

namespace tilebank::engine {

Result<StrategyKind> StrategyFor(const OpSpec& op, const std::string& tune_mode) {
  if (tune_mode == "GA,RL" || tune_mode == "RL,GA") return IsCubeOp(op.op_type) ? StrategyKind::kGenetic : StrategyKind::kMcts;
  auto kind = ParseStrategyKind(tune_mode);
  if (!kind.ok()) return Status::InvalidInput("--tune-mode " + tune_mode + ": expected GA, RL, GA,RL, random or exhaustive");
  return kind;
}

namespace {

constexpr size_t kFailureSamples = 5;

// The search state of one op: measures candidates and keeps the best.
class Session {
 public:
  // `runner` may be null when every candidate is measured in context.
  Session(const OpSpec& op, const TuneOptions& options, const Runner* runner,
          const std::function<void(const TrialEvent&)>& on_trial, TuneOutcome* outcome)
      : op_(op), options_(options), runner_(runner), on_trial_(on_trial), out_(outcome) {}

  bool OutOfTime() const { return options_.deadline && std::chrono::steady_clock::now() > *options_.deadline; }
  int used() const { return out_->trials; }

  // Builds and measures one candidate; returns its cost (+inf when it failed).
  double Try(const OpTemplate& t, const Policy& policy, TuneMode mode) {
    if (refused_in_context_.count(&t)) return INFINITY;  // no policy of it runs there: no trial spent
    RunResult r;
    if (options_.measure_in_context) {
      r = options_.measure_in_context(t, policy);
      // The built-in choice's own kernels under another policy: no trial, its time.
      if (r.same_as_builtin) return out_->default_ok ? out_->default_time.median_us : INFINITY;
      // A template the model cannot run there at all (a fused chain only oneDNN runs).
      if (!r.ok && r.failure.find(model::kOnlyOneDnnRunsIt) != std::string::npos) refused_in_context_.insert(&t);
    } else if (auto kernel = t.Build(op_, policy); !kernel.ok()) {
      r.failure = kernel.status().message();
    } else {
      RunOptions run = RunFor(policy);
      if (out_->found) run.cutoff_us = out_->best_time.median_us * 4;
      r = runner_->Measure(*kernel.value(), run);
    }
    out_->trials++;
    double cost = r.ok ? r.time.median_us : INFINITY;
    if (!r.ok) {
      out_->failures++;
      if (out_->failure_samples.size() < kFailureSamples)
        out_->failure_samples.push_back(std::string(t.id()) + " {" + PolicyText(policy) + "}: " + r.failure.substr(0, 300));
    } else {
      candidates_.push_back({&t, policy, mode, cost});
    }
    const bool improved = r.ok && (!out_->found || cost < out_->best_time.median_us * 0.99);
    stale_trials_ = improved ? 0 : stale_trials_ + 1;
    if (r.ok && (!out_->found || cost < out_->best_time.median_us)) {
      out_->found = true;
      out_->template_id = t.id();
      out_->template_version = t.version();
      out_->mode = mode;
      out_->policy = policy;
      out_->best_time = r.time;
    }
    if (on_trial_) {
      TrialEvent e{used(), options_.trials, mode, t.id(), PolicyText(policy), r,
                   out_->found ? out_->best_time.median_us : 0, out_->default_time.median_us};
      on_trial_(e);
    }
    return cost;
  }

  // The runner's options for a candidate of `policy` (its precision's tolerance).
  RunOptions RunFor(const Policy& policy) const {
    RunOptions run = options_.run;
    run.lower_precision = LowersPrecision(policy);
    return run;
  }

  // Runs the strategy over `space` for up to `budget` trials, first trying the seed policies that
  // are points of `space` (a seed from a wider space is mapped by knob values, or skipped).
  void Search(const OpTemplate& t, const SearchSpace& space, TuneMode mode, int budget, const std::vector<Policy>& seed_policies) {
    if (budget <= 0) return;
    std::vector<Config> seeds;
    for (const auto& p : seed_policies)
      if (Config c; space.ConfigOf(p, &c)) seeds.push_back(std::move(c));
    auto kind = StrategyFor(op_, options_.tune_mode).value();
    auto strategy = MakeStrategy(kind, space, options_.seed + out_->trials, std::move(seeds));
    stale_trials_ = 0;
    RunSearch(
        *strategy, budget,
        [&](const Config& c) {
          Policy policy = space.PolicyOf(c);
          auto [known, fresh] = measured_.try_emplace(PolicyText(policy), 0.0);
          if (fresh) known->second = Try(t, policy, mode);
          return known->second;
        },
        [this] { return OutOfTime() || Stalled(); });
  }

  // The current search made nothing faster for `patience` trials.
  bool Stalled() const { return options_.patience > 0 && stale_trials_ >= options_.patience; }

  std::map<std::string, double> measured_;  // policy text of the current template -> cost

  // Measures the `top` fastest candidates again, round robin for `rounds` rounds, and makes the
  // one with the lowest best-of-rounds median the winner. Interference on a shared machine only
  // ever slows a run down, so the best round is the one nearest the kernel's own speed; round
  // robin puts the rivals side by side in every round, and a candidate that won on one lucky
  // measurement during the search is checked next to them. The baseline (the built-in choice) is
  // always among them, so that a gain is one measured side by side with it, not against its first
  // measurement (taken before anything else ran: in a model, the first of a noisy sequence).
  void Confirm(size_t top, int rounds, const OpTemplate& baseline, const Policy& baseline_policy) {
    std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) { return a.cost < b.cost; });
    std::vector<Candidate> finalists;
    auto is_baseline = [&](const Candidate& c) { return c.t == &baseline && c.policy == baseline_policy; };
    for (const auto& c : candidates_) {
      bool twin = std::any_of(finalists.begin(), finalists.end(), [&](const Candidate& f) { return f.t == c.t && f.policy == c.policy; });
      if (!twin) finalists.push_back(c);
      if (finalists.size() == top) break;
    }
    if (std::none_of(finalists.begin(), finalists.end(), is_baseline))
      if (auto it = std::find_if(candidates_.begin(), candidates_.end(), is_baseline); it != candidates_.end()) finalists.push_back(*it);
    if (finalists.size() < 2) return;
    std::vector<std::unique_ptr<Kernel>> kernels;
    for (const auto& f : finalists) {
      if (options_.measure_in_context) break;  // measured in the model, not built here
      auto k = f.t->Build(op_, f.policy);
      if (!k.ok()) return;
      kernels.push_back(std::move(k.value()));
    }
    auto measure = [&](size_t i) {
      return options_.measure_in_context ? options_.measure_in_context(*finalists[i].t, finalists[i].policy) : runner_->Measure(*kernels[i], RunFor(finalists[i].policy));
    };
    std::vector<std::vector<Measurement>> runs(finalists.size());
    for (int round = 0; round < rounds && !OutOfTime(); ++round)
      for (size_t i = 0; i < finalists.size(); ++i)
        if (auto r = measure(i); r.ok) runs[i].push_back(r.time);
    size_t best = finalists.size();
    std::vector<Measurement> confirmed(finalists.size());
    for (size_t i = 0; i < finalists.size(); ++i) {
      if (runs[i].size() != static_cast<size_t>(rounds)) continue;
      confirmed[i] = *std::min_element(runs[i].begin(), runs[i].end(), [](const Measurement& a, const Measurement& b) { return a.median_us < b.median_us; });
      if (best == finalists.size() || confirmed[i].median_us < confirmed[best].median_us) best = i;
      if (is_baseline(finalists[i])) out_->default_time = confirmed[i];
    }
    if (best == finalists.size()) return;
    out_->template_id = finalists[best].t->id();
    out_->template_version = finalists[best].t->version();
    out_->mode = finalists[best].mode;
    out_->policy = finalists[best].policy;
    out_->best_time = confirmed[best];
  }

 private:
  const OpSpec& op_;
  const TuneOptions& options_;
  const Runner* runner_;
  const std::function<void(const TrialEvent&)>& on_trial_;
  TuneOutcome* out_;
  struct Candidate {
    const OpTemplate* t;
    Policy policy;
    TuneMode mode;
    double cost;
  };
  std::vector<Candidate> candidates_;  // every candidate that ran correctly
  std::set<const OpTemplate*> refused_in_context_;
  int stale_trials_ = 0;  // trials in a row that made the best no faster (see Stalled)
};

// `base` first, then the valid policies that differ from it in one knob, then those that differ in
// two (the second not the implementation knob): each value of each axis of a small space (every
// convolution algorithm, every layout) is tried once before any combination.
std::vector<Policy> NearPolicies(const SearchSpace& space, const Policy& base) {
  std::vector<Policy> seeds = {base};
  auto push = [&](Policy p) {
    if (space.valid(p) && std::find(seeds.begin(), seeds.end(), p) == seeds.end()) seeds.push_back(std::move(p));
  };
  auto with = [&space](const Policy& p, const std::string& name, const KnobValue& value) { return space.With(p, name, value); };
  std::vector<std::pair<size_t, Policy>> singles;  // (the knob changed, the policy)
  for (size_t i = 0; i < space.knobs.size(); ++i)
    for (const KnobValue& value : space.knobs[i].values)
      if (Policy one = with(base, space.knobs[i].name, value); one != base) {
        push(one);
        singles.emplace_back(i, std::move(one));
      }
  for (const auto& [i, one] : singles)
    for (size_t j = i + 1; j < space.knobs.size(); ++j)
      if (space.knobs[j].name != "impl")
        for (const KnobValue& second : space.knobs[j].values) push(with(one, space.knobs[j].name, second));
  return seeds;
}

bool HasKnobsOf(const SearchSpace& space, TuneMode mode) {
  return std::any_of(space.knobs.begin(), space.knobs.end(), [&](const KnobDomain& k) { return k.mode == mode && k.values.size() > 1; });
}

}  // namespace

Result<TuneOutcome> TuneOp(const OpSpec& op, const TuneOptions& options, const std::function<void(const TrialEvent&)>& on_trial,
                           const Runner* given_runner) {
  auto templates = TemplatesFor(op);
  if (!templates.ok()) return templates.status();
  auto strategy = StrategyFor(op, options.tune_mode);
  if (!strategy.ok()) return strategy.status();
  std::optional<Runner> own_runner;
  if (!given_runner && !options.measure_in_context) {
    auto made = Runner::Create(op, options.seed);
    if (!made.ok()) return made.status();
    own_runner.emplace(std::move(made.value()));
  }
  const Runner* runner = given_runner ? given_runner : own_runner ? &*own_runner : nullptr;

  TuneOutcome out;
  out.strategy = StrategyName(strategy.value());
  Session session(op, options, runner, on_trial, &out);
  const OpTemplate& primary = *templates->primary;
  // Every template's space as the job's precision mode allows it.
  auto space_of = [&](const OpTemplate& t) { return WithinPrecision(t.Space(op), options.precision_mode); };
  const SearchSpace space = space_of(primary);
  const Policy defaults = primary.DefaultPolicy(op);
  auto defaults_mode = DefaultPoliciesFromEnvironment();
  const BuiltinChoice builtin = BuiltinChoiceFor(op, defaults_mode.ok() ? *defaults_mode : DefaultPolicies::kBuiltin);

  // The built-in choice first: it is the baseline every mode is measured against.
  const bool builtin_is_primary = builtin.tmpl == &primary;
  double baseline_cost = session.Try(*builtin.tmpl, builtin.policy, builtin_is_primary ? TuneMode::kSchedule : TuneMode::kImpl);
  if (builtin_is_primary) session.measured_[PolicyText(builtin.policy)] = baseline_cost;
  out.baseline_template_id = builtin.tmpl->id();
  out.baseline_template_version = builtin.tmpl->version();
  out.baseline_mode = builtin_is_primary ? TuneMode::kSchedule : TuneMode::kImpl;
  out.baseline_policy = builtin.policy;
  out.default_ok = std::isfinite(baseline_cost);
  if (out.default_ok) out.default_time = out.best_time;
  else out.default_failure = out.failure_samples.empty() ? "failed" : out.failure_samples.back();
  std::set<const OpTemplate*> libraries_tried;  // templates with one policy only, measured already
  if (!builtin_is_primary && space_of(*builtin.tmpl).size() == 0) libraries_tried.insert(builtin.tmpl);

  // The starting points next; those of the primary template also seed its searches.
  std::vector<Policy> primary_seeds = {defaults};
  std::map<const OpTemplate*, std::vector<Policy>> alternative_seeds;
  for (const auto& start : options.starting_points) {
    const OpTemplate* t = TemplateById(start.template_id);
    if (!t || !t->Supports(op).ok() || !PolicyProblemAt(*t, op, start.policy).empty()) continue;
    if (!PrecisionAllowed(options.precision_mode, start.policy)) continue;
    if (t == builtin.tmpl && start.policy == builtin.policy) continue;
    const bool library = space_of(*t).size() == 0;
    if (library && !libraries_tried.insert(t).second) continue;
    const double cost = session.Try(*t, start.policy, t == &primary ? TuneMode::kSchedule : TuneMode::kImpl);
    if (t == &primary) {
      session.measured_[PolicyText(start.policy)] = cost;
      primary_seeds.insert(primary_seeds.begin(), start.policy);
    } else if (!library) {
      alternative_seeds[t].push_back(start.policy);
    }
  }

  auto wants = [&](TuneMode m) { return std::find(options.modes.begin(), options.modes.end(), m) != options.modes.end(); };
  // The built-in choice's own space first when it is an alternative with knobs (oneDNN's
  // implementations, algorithms and layouts for a convolution or a product): it won its op class's
  // comparisons, so its variants are where a gain is likeliest. Up to half the budget, at most one
  // trial per valid policy.
  if (wants(TuneMode::kImpl) && !builtin_is_primary) {
    const SearchSpace incumbent = space_of(*builtin.tmpl);
    if (incumbent.size() > 0 && incumbent.Cardinality() > 1) {
      const int budget = std::min<int>(std::max(1, options.trials / 2), static_cast<int>(incumbent.ValidConfigs().size()) - 1);
      session.measured_[PolicyText(builtin.policy)] = baseline_cost;
      session.Search(*builtin.tmpl, incumbent, TuneMode::kImpl, budget, NearPolicies(incumbent, builtin.policy));
      session.measured_.clear();
      libraries_tried.insert(builtin.tmpl);  // searched: the alternatives below pass it over
    }
  }
  const int total = std::max(1, options.trials - session.used() + 1);
  const size_t n_alternatives = wants(TuneMode::kImpl) ? templates->alternatives.size() : 0;
  const bool format = wants(TuneMode::kFormat) && HasKnobsOf(space, TuneMode::kFormat);
  // Impl mode: one trial for each library (its space is empty), a share of the budget for each
  // alternative template with knobs of its own.
  std::vector<SearchSpace> alt_spaces;
  int n_libraries = 0;
  for (size_t i = 0; i < n_alternatives; ++i) {
    alt_spaces.push_back(space_of(*templates->alternatives[i]));
    n_libraries += alt_spaces.back().size() == 0 && !libraries_tried.count(templates->alternatives[i]);
  }
  int n_searched = 0;
  for (size_t i = 0; i < n_alternatives; ++i) n_searched += alt_spaces[i].size() != 0 && !libraries_tried.count(templates->alternatives[i]);
  int impl_budget = n_libraries + std::min(total / 3, n_searched * std::max(1, total / 6));
  int format_budget = format ? total / 4 : 0;
  int schedule_budget = wants(TuneMode::kSchedule) ? total - 1 - impl_budget - format_budget : 0;
  if (!wants(TuneMode::kSchedule)) format_budget = format ? total - 1 - impl_budget : 0;

  if (wants(TuneMode::kSchedule))
    session.Search(primary, space.PinnedExcept(TuneMode::kSchedule, defaults), TuneMode::kSchedule, schedule_budget, primary_seeds);
  if (format) {
    std::vector<Policy> format_seeds = primary_seeds;
    if (out.found && out.template_id == primary.id()) format_seeds.insert(format_seeds.begin(), out.policy);
    session.Search(primary, space, TuneMode::kFormat, format_budget, format_seeds);
  }
  if (n_alternatives > 0) {
    int left = std::max(impl_budget - n_libraries, n_searched);
    int searched_left = n_searched;
    for (size_t i = 0; i < n_alternatives && !session.OutOfTime(); ++i) {
      const OpTemplate& alt = *templates->alternatives[i];
      session.measured_.clear();
      const SearchSpace& alt_space = alt_spaces[i];
      Policy alt_default = alt.DefaultPolicy(op);
      if (alt_space.size() != 0 && libraries_tried.count(&alt)) continue;  // the incumbent, searched above
      if (alt_space.size() == 0) {
        if (!libraries_tried.count(&alt)) session.Try(alt, alt_default, TuneMode::kImpl);
        continue;
      }
      int share = left / searched_left--;
      left -= share;
      std::vector<Policy> seeds = alternative_seeds[&alt];
      seeds.push_back(alt_default);
      if (share <= 1) session.Try(alt, seeds.front(), TuneMode::kImpl);
      else session.Search(alt, alt_space, TuneMode::kImpl, share, seeds);
    }
  }
  if (options.confirm_top > 1) session.Confirm(options.confirm_top, options.confirm_rounds, *builtin.tmpl, builtin.policy);
  return out;
}

}  // namespace tilebank::engine
