#include "engine/jobs/model_opat_job.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "engine/catalog/template_registry.h"
#include "engine/jobs/entries_in_context.h"
#include "engine/jobs/model_verdict.h"
#include "engine/jobs/result_file.h"
#include "engine/jobs/winner_entry.h"
#include "engine/backends/library_impls.h"
#include "engine/core/precision_mode.h"
#include "engine/backends/op_template.h"
#include "repo/bank.h"
#include "repo/bank_location.h"
#include "repo/key.h"
#include "base/json_text.h"

namespace tilebank::engine {

std::string ModelName(const std::string& path) {
  const std::filesystem::path p(path);
  // Exported models are often <name>/model.onnx: the directory names them.
  if (p.stem() == "model" && p.has_parent_path() && !p.parent_path().filename().empty()) return p.parent_path().filename().string();
  return p.stem().string();
}

namespace {

Result<std::unique_ptr<Bank>> OpenIfPresent(const std::string& dir, OpenMode mode = OpenMode::kReadOnly) {
  if (!IsBankDir(dir)) return std::unique_ptr<Bank>();
  auto bank = Bank::Open(dir, {mode, "", ""});
  if (!bank.ok()) return bank.status();
  return std::move(bank.value());
}

// The model bound to the bank in `bank_dir` as it is now (default policies when there is none), to
// its entries in the precisions the job allows (a force_fp32 job measures and judges the model with
// every step in float32).
Result<std::unique_ptr<model::Executor>> BindWithBank(const model::Graph& graph, const std::string& bank_dir, const std::string& model_path,
                                                      PrecisionMode precision) {
  auto bank = OpenIfPresent(bank_dir);
  if (!bank.ok()) return bank.status();
  model::LoadOptions options;
  options.precision = precision;
  auto executor = model::BindToBank(graph, bank->get(), options);
  if (!executor.ok()) return executor.status().WithContext(model_path);
  return executor;
}

Result<model::ModelTiming> TimeWhole(const ModelOpatOptions& o, model::Executor& executor) {
  return model::TimeModel(executor, model::RandomTypedInputs(executor.graph(), 1), o.warmup, o.repeats);
}

// The bank's operator entries as they were before the job: those it added are absent (the model
// runs the built-in choice there), those it replaced are the earlier ones.
model::PolicyLookup PoliciesWithoutThisRun(const Bank* bank, const ReplacedEntries& replaced, PrecisionMode precision) {
  const model::PolicyLookup now = model::BankLookup(bank, precision);
  return [now, &replaced, precision](const OpSpec& op) -> std::optional<model::FoundPolicy> {
    auto it = replaced.find(FormatKey(EntryKind::kOp, op.canonical.key));
    if (it == replaced.end()) return now ? now(op) : std::nullopt;
    if (!it->second || !PrecisionAllowed(precision, it->second->policy)) return std::nullopt;
    return model::FoundPolicy{*it->second, false};
  };
}

// Node index by name.
std::map<std::string, size_t> NodesByName(const model::Graph& graph) {
  std::map<std::string, size_t> named;
  for (size_t n = 0; n < graph.nodes.size(); ++n) named.emplace(graph.nodes[n].name, n);
  return named;
}

// The values step `b` reads (its node's inputs) or writes (its node's outputs and those of the
// nodes fused into it: the chain's last node writes the step's output).
std::vector<int> TouchedBy(const model::Graph& graph, const model::NodeBinding& b, const std::map<std::string, size_t>& node_named) {
  const model::Node& node = graph.nodes[b.node];
  std::vector<int> values(node.inputs.begin(), node.inputs.end());
  values.insert(values.end(), node.outputs.begin(), node.outputs.end());
  for (const std::string& fused : b.fused_nodes)
    if (auto it = node_named.find(fused); it != node_named.end()) values.insert(values.end(), graph.nodes[it->second].outputs.begin(), graph.nodes[it->second].outputs.end());
  return values;
}

// The bf16 twins `twins` (op keys) the model runs, grouped by the values handed over in bf16 that
// join their steps, directly or through other steps that read and write bf16 (a squeeze-excitation's
// scale between two convolutions): each group a chain of steps that pay together.
std::vector<std::vector<std::string>> Bf16Chains(const model::Executor& ex, const std::set<std::string>& twins) {
  const model::Graph& graph = ex.graph();
  std::map<std::string, std::string> parent;  // union-find over twin keys ("k" + key) and narrow values ("v" + id)
  std::function<std::string(const std::string&)> find = [&](const std::string& k) {
    parent.emplace(k, k);
    return parent[k] == k ? k : parent[k] = find(parent[k]);
  };
  const std::map<std::string, size_t> node_named = NodesByName(graph);
  std::set<std::string> present;  // the twins' keys the model runs
  for (const model::NodeBinding& b : ex.bindings()) {
    if (b.node < 0) continue;
    std::vector<std::string> joined;
    if (b.op) {
      const std::string key = FormatKey(EntryKind::kOp, b.op->op.canonical.key);
      if (twins.count(key)) joined.push_back("k" + key), present.insert(key);
    }
    for (int v : TouchedBy(graph, b, node_named))
      if (v >= 0 && ex.LayoutOf(v).narrow) joined.push_back("v" + std::to_string(v));
    for (size_t k = 1; k < joined.size(); ++k) parent[find(joined[k])] = find(joined[0]);
  }
  std::map<std::string, std::vector<std::string>> chains;
  for (const std::string& key : present) chains[find("k" + key)].push_back(key);
  std::vector<std::vector<std::string>> out;
  for (auto& [root, keys] : chains) out.push_back(std::move(keys));
  return out;
}

// Each of the job's entries judged where the model runs it (engine/jobs/entries_in_context.h):
// those whose steps are not faster with it beyond the spread go back, and `tuned` is bound again
// without them. `note` says what was measured and decided; `unchanged` receives the timing when
// every entry stayed (the model with them is then the one the final comparison times).
Status KeepFasterInContext(const ModelOpatOptions& o, const model::Graph& graph, const std::string& bank_dir, model::Executor& before,
                           const std::vector<TypedTensor>& inputs, std::unique_ptr<model::Executor>* tuned, ModelOpatReport* report,
                           std::string* note, std::optional<model::InterleavedTiming>* unchanged) {
  auto timing = model::TimeInterleaved(before, **tuned, inputs, o.warmup, o.repeats, o.min_timing_s);
  if (!timing.ok()) return timing.status();
  std::vector<std::string> keys;
  for (const auto& [key, earlier] : report->job.replaced) keys.push_back(key);
  std::set<std::string> losing;
  const std::vector<EntryInContext> judged = JudgeEntriesInContext(before, **tuned, *timing, keys);
  for (const EntryInContext& e : judged)
    if (!e.Faster()) losing.insert(e.key);
  *note = "in context: " + std::to_string(keys.size() - losing.size()) + " of " + std::to_string(keys.size()) +
          " entries made their steps faster where the model runs them";
  // bf16 twins handing values to each other pay together: a chain whose steps are faster as a whole
  // keeps every entry of it.
  size_t chained = 0;
  for (const std::vector<std::string>& chain : Bf16Chains(**tuned, report->bf16_twins)) {
    if (chain.size() < 2 || !JudgeTogetherInContext(before, **tuned, *timing, chain).Faster()) continue;
    for (const std::string& key : chain) chained += losing.erase(key);
  }
  if (chained) *note += ", " + std::to_string(chained) + " more in bf16 chains faster together";
  for (const EntryInContext& e : judged)
    report->in_context.push_back({{"key", e.key}, {"node", e.node}, {"steps", e.steps}, {"without_us", RoundForResult(e.without_us, 1e3)},
                                  {"with_us", RoundForResult(e.with_us, 1e3)}, {"spread_us", RoundForResult(e.spread_us, 1e3)},
                                  {"gain_us", RoundForResult(e.gain.median, 1e3)}, {"gain_low_us", RoundForResult(e.gain.low, 1e3)},
                                  {"gain_high_us", RoundForResult(e.gain.high, 1e3)}, {"precision", e.precision},
                                  {"kept", !losing.count(e.key)}});
  // A bf16 twin not faster gives its key back to the search's winner it replaced.
  std::vector<Entry> restored;
  for (auto it = losing.begin(); it != losing.end();) {
    auto under = report->under_twins.find(*it);
    if (under == report->under_twins.end()) {
      ++it;
      continue;
    }
    restored.push_back(under->second);
    it = losing.erase(it);
  }
  if (losing.empty() && restored.empty()) {
    *note += "; ";
    *unchanged = std::move(timing.value());
    return Status::Ok();
  }
  {
    auto bank = Bank::Open(bank_dir, {OpenMode::kReadWrite, o.job.soc_version, o.job.fingerprint});
    if (!bank.ok()) return bank.status();
    if (!restored.empty()) TB_RETURN_IF_ERROR(AddToOpatJob(**bank, &report->job, restored));
    if (!losing.empty()) {
      auto result = TakeBackOpatJob(**bank, report->job.job_name, &losing);
      if (!result.ok()) return result.status();
      report->job.result = std::move(result.value());
    }
  }
  for (const std::string& key : losing) report->job.replaced.erase(key);
  if (!restored.empty()) *note += ", " + std::to_string(restored.size()) + " bf16 forms gave their keys back to the search's choice";
  *note += losing.empty() ? "; " : ", the other " + std::to_string(losing.size()) + " were taken back; ";
  auto rebound = BindWithBank(graph, bank_dir, o.model_path, o.job.tune.precision_mode);
  if (!rebound.ok()) return rebound.status();
  *tuned = std::move(rebound.value());
  return Status::Ok();
}

// bf16 between layers. A convolution in bf16 pays most where its neighbours compute in bf16 too and
// the value between them goes over in bf16 (engine/runtime/layout_plan.h: "narrow"); the search
// timed each candidate alone in the model, converting its source, where none of that shows (a
// depthwise convolution in bf16 loses alone and wins between two bf16 ones). So where the job
// allows bf16, every float32 convolution oneDNN computes natively in bf16 here, and that hands a
// value to or takes one from another such, is tried so at once: the bf16 twin of the policy its
// step runs (impl.onednn's; an own kernel the bank chose stays). The model with all twins is timed
// interleaved against the model as the search left it; only when it is faster beyond the spread are
// the twins whose steps were faster stored, as this job's entries (a twin over the job's own entry
// remembers it in `report->under_twins`), and then judged one by one in context and as a whole with
// the rest, as every entry is (DecideOnEntries). `report->note` says what was measured.
Status TryBf16Twins(const ModelOpatOptions& o, const model::Graph& graph, const std::string& bank_dir, ModelOpatReport* report) {
  OpatJobReport* job = &report->job;
  std::string* note = &report->note;
  std::map<std::string, Entry> under;  // key -> this job's entry its twin would replace
  const OpTemplate& onednn = OneDnnImpl();
  std::vector<Entry> twins;
  std::unique_ptr<model::Executor> current, twinned;
  {
    auto bank = OpenIfPresent(bank_dir);
    if (!bank.ok()) return bank.status();
    const model::PolicyLookup now = model::BankLookup(bank->get(), o.job.tune.precision_mode);
    model::LoadOptions options;
    options.precision = o.job.tune.precision_mode;
    TB_RETURN_IF_ERROR(model::ReadLoadEnvironment(&options));
    auto bound = model::Executor::Load(graph, now, model::BankFusionLookup(bank->get()), options);  // the bank open once in this process
    if (!bound.ok()) return bound.status().WithContext(o.model_path);
    current = std::move(bound.value());
    std::map<std::string, Entry> by_key;
    bool native = false;  // a convolution of the model has a bf16 kernel here
    const std::string bank_id = *bank ? (*bank)->meta_at_open().bank_id : "";
    for (const model::NodeBinding& b : current->bindings()) {
      if (!b.op || b.op->op.op_type != "Conv") continue;
      if (b.precision != "fp32") {
        native = true;  // the search put it in bf16 already
        continue;
      }
      const OpSpec& op = b.op->op;
      const std::string key = FormatKey(EntryKind::kOp, op.canonical.key);
      if (by_key.count(key)) continue;
      const SearchSpace space = onednn.Space(op);
      if (space.IndexOf(kPrecisionKnob) < 0) continue;  // no native bf16 kernel for it here
      native = true;
      // The policy the step runs, in bf16: none where that is not impl.onednn's, or has no bf16 form
      // (an own Winograd or depthwise kernel the search chose stays).
      const auto found = now ? now(op) : std::nullopt;
      const bool from_bank = found && !found->nearest;
      if (from_bank && found->entry.template_id != onednn.id()) continue;
      const Policy twin = space.With(from_bank ? found->entry.policy : onednn.DefaultPolicy(op), kPrecisionKnob, std::string("bf16"));
      if (!space.valid(twin)) continue;
      if (from_bank && job->replaced.count(key)) under.emplace(key, found->entry);
      by_key.emplace(key, WinnerEntry(EntryKind::kOp, op.op_type, op.canonical.text, WinnerTemplate{onednn.id(), onednn.version(), TuneMode::kImpl, twin},
                                      {}, {}, 0, "bf16 twin", bank_id));
    }
    if (by_key.empty()) {  // nothing to say where this CPU has no bf16 kernels
      if (native) *note = "bf16 between layers: no float32 convolution left that oneDNN computes in bf16 here. ";
      return Status::Ok();
    }
    model::PolicyLookup with_twins = [&](const OpSpec& op) -> std::optional<model::FoundPolicy> {
      if (auto it = by_key.find(FormatKey(EntryKind::kOp, op.canonical.key)); it != by_key.end()) return model::FoundPolicy{it->second, false};
      return now ? now(op) : std::nullopt;
    };
    // Bound with every twin, then with only those in chains: a twin whose steps neither read nor
    // write a value handed over narrow only pays for converting its source.
    const std::map<std::string, size_t> node_named = NodesByName(graph);
    for (int pass = 0; pass < 2; ++pass) {
      auto loaded = model::Executor::Load(graph, with_twins, model::BankFusionLookup(bank->get()), options);
      if (!loaded.ok()) return loaded.status().WithContext(o.model_path);
      twinned = std::move(loaded.value());
      std::set<std::string> chained;
      for (const model::NodeBinding& b : twinned->bindings()) {
        if (!b.op || b.node < 0 || !by_key.count(FormatKey(EntryKind::kOp, b.op->op.canonical.key))) continue;
        bool narrow = false;
        for (int v : TouchedBy(graph, b, node_named)) narrow |= v >= 0 && twinned->LayoutOf(v).narrow;
        if (narrow) chained.insert(FormatKey(EntryKind::kOp, b.op->op.canonical.key));
      }
      if (chained.empty()) {
        *note = "bf16 between layers: no two of the " + std::to_string(by_key.size()) + " convolutions oneDNN computes in bf16 here hand a value to each other; nothing tried. ";
        return Status::Ok();
      }
      if (chained.size() == by_key.size()) break;
      for (auto it = by_key.begin(); it != by_key.end();) it = chained.count(it->first) ? std::next(it) : by_key.erase(it);
    }
    for (auto& [key, e] : by_key) twins.push_back(std::move(e));
  }  // the bank closed: it is opened for writing below
  if (twinned->LowerPrecisionSteps() <= current->LowerPrecisionSteps()) {
    *note = "bf16 between layers: the model bound with them computes no more steps in bf16. ";
    return Status::Ok();
  }
  const std::vector<TypedTensor> inputs = model::RandomTypedInputs(graph, 3);
  auto timing = model::TimeInterleaved(*current, *twinned, inputs, o.warmup, o.repeats, o.min_timing_s);
  if (!timing.ok()) return timing.status();
  const ModelVerdict verdict = ModelVerdict::Of(*timing);
  *note = "bf16 between layers: " + std::to_string(twins.size()) + " convolutions tried in bf16 together, " +
          std::to_string(twinned->LowerPrecisionSteps() - current->LowerPrecisionSteps()) + " more steps in bf16: " + verdict.Measured(twins.size());
  if (!verdict.Faster()) {
    *note += "; not stored. ";
    return Status::Ok();
  }
  std::vector<std::string> keys;
  for (const Entry& e : twins) keys.push_back(FormatKey(EntryKind::kOp, e.key()));
  // Each stored with what its steps (and their readers) took in the model without and with the
  // twins; one whose steps were slower would not stay in context (DecideOnEntries), and is left out.
  const std::vector<EntryInContext> judged = JudgeEntriesInContext(*current, *twinned, *timing, keys);
  std::vector<Entry> faster;
  for (size_t i = 0; i < twins.size(); ++i) {
    if (judged[i].steps == 0 || judged[i].with_us >= judged[i].without_us || SlowerBeyondSpread(judged[i].gain)) continue;
    const uint32_t runs = static_cast<uint32_t>(timing->a.node_us.empty() ? 0 : timing->a.node_us[0].size());
    twins[i].before = {judged[i].without_us, judged[i].spread_us, runs};
    twins[i].after = {judged[i].with_us, judged[i].spread_us, runs};
    faster.push_back(std::move(twins[i]));
  }
  twins = std::move(faster);
  current.reset();
  twinned.reset();
  auto bank = Bank::Open(bank_dir, {OpenMode::kReadWrite, o.job.soc_version, o.job.fingerprint});
  if (!bank.ok()) return bank.status();
  TB_RETURN_IF_ERROR(AddToOpatJob(**bank, job, twins));
  *note += "; the " + std::to_string(twins.size()) + " whose steps were faster with them stored as this run's entries. ";
  for (const Entry& e : twins) {
    const std::string key = FormatKey(EntryKind::kOp, e.key());
    report->bf16_twins.insert(key);
    if (auto it = under.find(key); it != under.end()) report->under_twins.insert(*it);
  }
  return Status::Ok();
}

// The job's end: the model with this run's entries against the model without them (`before`, bound
// before the job, or bound now: with `as_before`, the answers the bank gave before the job, when
// given, else from the job's record of what it replaced), timed interleaved. The entries stay only
// when the model is faster with them beyond the spread (ModelVerdict::Faster).
Status DecideOnEntries(const ModelOpatOptions& o, const model::Graph& graph, const std::string& bank_dir, model::Executor* before,
                       const model::PolicyLookup& as_before,
                       std::unique_ptr<model::Executor> tuned, ModelOpatReport* report, std::unique_ptr<model::Executor>* after) {
  const ReplacedEntries stored = report->job.replaced;
  std::unique_ptr<model::Executor> rebound;
  if (!before) {
    auto bank = OpenIfPresent(bank_dir);
    if (!bank.ok()) return bank.status();
    model::LoadOptions options;
    options.precision = o.job.tune.precision_mode;
    TB_RETURN_IF_ERROR(model::ReadLoadEnvironment(&options));
    // The policies the model was bound with before the job when known: the bank's answers now (its
    // nearest shapes) may be this run's entries even for operators the job left alone.
    const model::PolicyLookup policies = as_before ? as_before : PoliciesWithoutThisRun(bank->get(), stored, o.job.tune.precision_mode);
    auto without = model::Executor::Load(graph, policies, model::BankFusionLookup(bank->get()), options);
    if (!without.ok()) return without.status().WithContext(o.model_path);
    rebound = std::move(without.value());
    before = rebound.get();
  }
  const std::vector<TypedTensor> inputs = model::RandomTypedInputs(graph, 1);
  std::string in_context;
  std::optional<model::InterleavedTiming> unchanged;  // the same two models, timed already
  if (o.in_context && !stored.empty())
    TB_RETURN_IF_ERROR(KeepFasterInContext(o, graph, bank_dir, *before, inputs, &tuned, report, &in_context, &unchanged));
  const ReplacedEntries replaced = report->job.replaced;
  auto timing = o.time_models ? o.time_models(*before, *tuned, inputs)
                : unchanged   ? Result<model::InterleavedTiming>(std::move(*unchanged))
                              : model::TimeInterleaved(*before, *tuned, inputs, o.warmup, o.repeats, o.min_timing_s);
  if (!timing.ok()) return timing.status();
  const ModelVerdict verdict = ModelVerdict::Of(*timing);
  report->baseline_ms = verdict.without_ms;
  // Without entries the two runs are one model: their difference is the machine's, reported as none.
  report->result_ms = verdict.ReportedResultMs(replaced.empty());
  report->note += in_context + "model: " + verdict.Measured(replaced.size());
  // Each bf16 entry was checked in context alone; together their roundings add up, so the model
  // with all of them must still match the model without them within bf16's tolerance.
  std::string beyond_tolerance;
  if (!replaced.empty() && tuned->LowerPrecisionSteps() > 0) {
    std::vector<TypedTensor> without_outputs, with_outputs;
    TB_RETURN_IF_ERROR(before->Run(PointersTo(inputs), &without_outputs));
    TB_RETURN_IF_ERROR(tuned->Run(PointersTo(inputs), &with_outputs));
    if (const model::Comparison c = model::CompareTypedTensors(with_outputs, without_outputs, /*lower_precision=*/true); !c.ok) beyond_tolerance = c.worst;
  }
  if (replaced.empty()) {
    report->note += stored.empty() ? "; this run stored nothing" : "; no entry of this run is left";
  } else if (verdict.Faster() && beyond_tolerance.empty()) {
    report->note += "; kept";
  } else {
    auto bank = Bank::Open(bank_dir, {OpenMode::kReadWrite, o.job.soc_version, o.job.fingerprint});
    if (!bank.ok()) return bank.status();
    auto result = TakeBackOpatJob(**bank, report->job.job_name);
    if (!result.ok()) return result.status();
    report->job.result = std::move(result.value());
    report->job.replaced.clear();
    report->reverted = true;
    report->result_ms = verdict.without_ms;
    const std::string why = !beyond_tolerance.empty() ? "its bf16 steps together move its outputs beyond bf16's tolerance (" + beyond_tolerance + ")"
                            : verdict.WithinSpread() ? "no faster with them beyond the spread"
                                                     : "slower with them by more than the spread";
    report->note += "; " + why + ": they were taken back, and the model runs as it did before this run";
  }
  auto& opat = report->job.result.at(1).at("OPAT");
  opat["model_baseline_performance(ms)"] = report->baseline_ms;
  opat["model_result_performance(ms)"] = report->result_ms;
  opat["model_performance_improvement"] = verdict.ReportedText(report->reverted || replaced.empty());
  if (!report->in_context.empty()) opat["in_context"] = report->in_context;
  if (o.job.tune.precision_mode != PrecisionMode::kForceFp32) opat["precision_mode"] = PrecisionModeName(o.job.tune.precision_mode);
  report->job.improvement_percent = verdict.ReportedPercent(report->reverted || replaced.empty());
  TB_RETURN_IF_ERROR(WriteJsonAtomically(report->job.result_path, report->job.result));
  if (after) {
    if (report->reverted) {  // the model as it now runs: bound without the entries taken back
      auto now = BindWithBank(graph, bank_dir, o.model_path, o.job.tune.precision_mode);
      if (!now.ok()) return now.status();
      tuned = std::move(now.value());
    }
    *after = std::move(tuned);
  }
  return Status::Ok();
}

// The model job around RunOpatJob. `before` (the model bound to the bank as it was; null when the
// job goes on with --reload) gives the baseline and the operator list; the model is bound again
// to the tuned bank for the result, and that executor is handed to `after` when given.
Result<ModelOpatReport> RunModelJob(const ModelOpatOptions& o, const model::Graph& graph, model::Executor* before,
                                    std::unique_ptr<model::Executor>* after, double* after_bind_s = nullptr) {
  ModelOpatReport report;
  const std::string bank_dir = BankDirUnder(o.job.bank_root, o.job.soc_version);
  OpatJobOptions job = o.job;
  if (!job.reload) {
    // The operators' times in the model weight the time budget and order the list.
    auto baseline = TimeWhole(o, *before);
    if (!baseline.ok()) return baseline.status();
    const std::string name = ModelName(o.model_path);
    const nlohmann::json ops = ModelOpList(*before, baseline->node_median_us, &job.budget_weights);
    if (ops.empty())  // before anything is written
      return Status::InvalidInput(o.model_path + ": no operator is left for OPAT to tune: every tunable one runs inside a subgraph the bank " +
                                  "already fuses (SGAT's entries), or the model has none");
    std::error_code ec;
    std::filesystem::create_directories(job.output_dir, ec);
    if (ec) return Status::InvalidInput("cannot create the output directory " + job.output_dir + ": " + ec.message());
    job.ops_path = job.output_dir + "/" + name + "_opat_ops.json";
    job.tuning_name = name;
    job.model_baseline_ms = baseline->median_ms;
    TB_RETURN_IF_ERROR(WriteJsonAtomically(job.ops_path, ops, 1));
  }
  std::optional<ModelContext> context;
  if (before && o.in_context) {
    auto made = ModelContext::Create(before, model::RandomTypedInputs(graph, 2));
    if (!made.ok()) return made.status().WithContext(o.model_path);
    context.emplace(std::move(made.value()));
    job.in_context = [&context](const OpSpec& op) { return context->For(op); };
  }
  auto result = RunOpatJob(job);
  if (!result.ok()) return result.status();
  report.job = std::move(result.value());
  if (o.in_context && o.job.tune.precision_mode == PrecisionMode::kAllowFp32ToBf16 && !report.job.stopped)
    TB_RETURN_IF_ERROR(TryBf16Twins(o, graph, bank_dir, &report));
  const auto bind_start = std::chrono::steady_clock::now();
  auto tuned = BindWithBank(graph, bank_dir, o.model_path, o.job.tune.precision_mode);
  if (!tuned.ok()) return tuned.status();
  if (after_bind_s) *after_bind_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - bind_start).count();
  // The model the search swapped candidates into runs slower than a fresh bind of the same policies
  // (efficientnet_b0: 11.3 ms against 8.4), which made entries look faster than they are: the final
  // comparison binds the model without this run's entries again.
  TB_RETURN_IF_ERROR(DecideOnEntries(o, graph, bank_dir, context ? nullptr : before, before ? before->LookupAsBound() : nullptr, std::move(tuned.value()),
                                     &report, after));
  return report;
}

}  // namespace

nlohmann::json ModelOpList(const model::Executor& executor, const std::vector<double>& node_us, std::vector<double>* weights) {
  struct Task {
    nlohmann::json description;
    double us = 0;
    size_t first = 0;
  };
  std::map<std::string, Task> by_key;
  const auto& bindings = executor.bindings();
  for (size_t i = 0; i < bindings.size(); ++i) {
    // Subgraphs the bank fuses are SGAT's; the anchor of a built-in fusion is tuned as an operator.
    if (!bindings[i].op || (bindings[i].template_id == kFusedTemplateId && bindings[i].policy_source != "builtin")) continue;
    const std::string key = FormatKey(EntryKind::kOp, bindings[i].op->op.canonical.key);
    auto [it, added] = by_key.try_emplace(key);
    if (added) {
      const auto& node = executor.graph().nodes[bindings[i].node];
      it->second.description = model::NodeDescription(executor.graph(), node, bindings[i].op->input_values);
      it->second.first = i;
    }
    it->second.us += i < node_us.size() ? node_us[i] : 0.0;
  }
  std::vector<Task> tasks;
  for (auto& [key, t] : by_key) tasks.push_back(std::move(t));
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.us != b.us ? a.us > b.us : a.first < b.first; });
  nlohmann::json list = nlohmann::json::array();
  if (weights) weights->clear();
  for (auto& t : tasks) {
    list.push_back(std::move(t.description));
    if (weights) weights->push_back(t.us);
  }
  return list;
}

Result<ModelOpatReport> RunModelOpatJob(const ModelOpatOptions& o) {
  auto graph = model::ImportModel(o.model_path, o.input_shapes, o.shapes_by_position);  // once; each executor binds a copy
  if (!graph.ok()) return graph.status();
  std::unique_ptr<model::Executor> before;
  if (!o.job.reload) {
    auto bound = BindWithBank(*graph, BankDirUnder(o.job.bank_root, o.job.soc_version), o.model_path, o.job.tune.precision_mode);
    if (!bound.ok()) return bound.status();
    before = std::move(bound.value());
  }
  return RunModelJob(o, *graph, before.get(), nullptr);
}

namespace {

constexpr const char* kTriedPrefix = "online-tried/";

// "<template id> <version>" of the template an untuned op runs with: a tried marker holds it.
// An operator the bank holds no entry for at its own shape: it runs the built-in choice or the
// nearest shape's policy, and online tuning tunes it.
bool NotFromBank(const model::NodeBinding& b) { return b.policy_source == "builtin" || b.policy_source == "nearest"; }

std::string TriedStamp(const model::NodeBinding& b) {
  const OpTemplate* t = TemplateById(b.template_id);
  return b.template_id + " " + std::to_string(t ? t->version() : 0);
}

}  // namespace

Result<OnlineTuning> TuneOnline(const ModelOpatOptions& o) {
  const std::string bank_dir = BankDirUnder(o.job.bank_root, o.job.soc_version);
  const auto start = std::chrono::steady_clock::now();
  auto graph = model::ImportModel(o.model_path, o.input_shapes, o.shapes_by_position);  // once; each executor binds a copy
  if (!graph.ok()) return graph.status();
  OnlineTuning online;
  std::vector<std::string> lacking;  // node names of the ops to tune (the first node of each key)
  {
    auto bank = OpenIfPresent(bank_dir, OpenMode::kReadWrite);  // the jobs database is read in a write transaction
    if (!bank.ok()) return bank.status();
    auto executor = model::BindToBank(*graph, bank->get());
    if (!executor.ok()) return executor.status().WithContext(o.model_path);
    online.executor = std::move(executor.value());
    std::set<std::string> seen;
    for (const auto& b : online.executor->bindings()) {
      if (!b.op || !NotFromBank(b)) continue;
      const std::string key = FormatKey(EntryKind::kOp, b.op->op.canonical.key);
      if (!seen.insert(key).second) continue;
      std::optional<std::string> tried;
      if (*bank)
        TB_RETURN_IF_ERROR((*bank)->Write([&](WriteTxn& txn) -> Status {
          auto job = txn.GetJob(kTriedPrefix + key);
          if (!job.ok()) return job.status();
          tried = *job;
          return Status::Ok();
        }, /*commit=*/false));
      if (!tried || *tried != TriedStamp(b)) lacking.push_back(b.name);
    }
  }
  if (lacking.empty()) {  // the model as loaded is the model to run
    online.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return online;
  }
  ModelOpatOptions tune = o;
  tune.job.tune_op_names = lacking;
  std::unique_ptr<model::Executor> tuned;
  auto report = RunModelJob(tune, *graph, online.executor.get(), &tuned, &online.load_s);
  if (!report.ok()) return report.status();
  online.executor = std::move(tuned);
  auto bank = Bank::Open(bank_dir, {OpenMode::kReadWrite, o.job.soc_version, o.job.fingerprint});
  if (!bank.ok()) return bank.status();
  TB_RETURN_IF_ERROR((*bank)->Write([&](WriteTxn& txn) -> Status {
    for (const auto& b : online.executor->bindings())
      if (b.op && NotFromBank(b))
        TB_RETURN_IF_ERROR(txn.PutJob(kTriedPrefix + FormatKey(EntryKind::kOp, b.op->op.canonical.key), TriedStamp(b)));
    return Status::Ok();
  }));
  online.report = std::move(report.value());
  return online;
}

}  // namespace tilebank::engine
