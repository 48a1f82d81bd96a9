#include "engine/jobs/opat_job.h"

#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "engine/catalog/op_list_check.h"
#include "engine/catalog/template_registry.h"
#include "engine/backends/op_template.h"
#include "engine/core/template_catalog.h"
#include "engine/jobs/result_file.h"
#include "engine/jobs/replaced_entries.h"
#include "engine/jobs/stored_job.h"
#include "engine/jobs/task_loop.h"
#include "engine/jobs/winner_entry.h"
#include "repo/bank.h"
#include "repo/bank_location.h"
#include "repo/key.h"
#include "repo/lookup.h"
#include "repo/op_defaults.h"
#include "repo/provenance.h"
#include "base/json_text.h"

namespace tilebank::engine {

namespace {

constexpr int kCheckpointVersion = 1;

std::string Stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

// The job's checkpoint: what was asked and what each finished operator came to.
struct Checkpoint {
  std::string job_name, tuning_name, ops_path, result_path;
  std::vector<std::string> op_keys;
  std::optional<double> model_baseline_ms;  // tune --model: the whole model before tuning
  double elapsed_s = 0;
  bool finished = false;
  std::vector<OpRecord> records;
  ReplacedEntries replaced;  // op key -> the entry before this job stored one (nullopt: none)

  nlohmann::json ToJson() const {
    nlohmann::json recs = nlohmann::json::array();
    for (const auto& r : records) recs.push_back(r.ToJson());
    return {{"version", kCheckpointVersion}, {"job_name", job_name}, {"tuning_name", tuning_name}, {"ops_path", ops_path},
            {"result_path", result_path}, {"op_keys", op_keys}, {"elapsed_s", elapsed_s}, {"finished", finished},
            {"records", recs}, {"model_baseline_ms", model_baseline_ms ? nlohmann::json(*model_baseline_ms) : nlohmann::json()},
            {"replaced", ReplacedToJson(replaced)}};
  }
  static Result<Checkpoint> FromJson(const std::string& text, const std::string& name) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::Corrupt("job checkpoint " + name + " is not valid JSON");
    if (j.value("version", 0) != kCheckpointVersion)
      return Status::Refused("job checkpoint " + name + " has version " + std::to_string(j.value("version", 0)) + "; this tilebank reads version " + std::to_string(kCheckpointVersion));
    try {
      Checkpoint c;
      c.job_name = j.at("job_name").get<std::string>();
      c.tuning_name = j.at("tuning_name").get<std::string>();
      c.ops_path = j.at("ops_path").get<std::string>();
      c.result_path = j.at("result_path").get<std::string>();
      c.op_keys = j.at("op_keys").get<std::vector<std::string>>();
      c.elapsed_s = j.at("elapsed_s").get<double>();
      c.finished = j.at("finished").get<bool>();
      if (j.contains("model_baseline_ms") && j["model_baseline_ms"].is_number()) c.model_baseline_ms = j["model_baseline_ms"].get<double>();
      for (const auto& r : j.at("records")) c.records.push_back(OpRecord::FromJson(r));
      if (j.contains("replaced")) {  // absent in checkpoints written before jobs could take entries back
        auto replaced = ReplacedFromJson(j["replaced"], "job checkpoint " + name);
        if (!replaced.ok()) return replaced.status();
        c.replaced = std::move(replaced.value());
      }
      return c;
    } catch (const nlohmann::json::exception& e) {
      return Status::Corrupt("job checkpoint " + name + " is malformed: " + e.what());
    }
  }
};

bool Selected(const OpSpec& op, const std::vector<std::string>& names, const std::vector<std::string>& types) {
  if (names.empty() && types.empty()) return true;
  for (const auto& n : names)
    if (n == op.name) return true;
  for (const auto& t : types)
    if (t == op.op_type || CanonicalOpType(t) == op.op_type) return true;
  return false;
}

// Tests of the failure path name ops in TILEBANK_TEST_FAIL_OPS (comma-separated): their tuning
// fails as a crash or a wrong result would (every valid op list passes CheckOpList first).
bool FailureInjectedFor(const OpSpec& op) {
  const char* names = std::getenv("TILEBANK_TEST_FAIL_OPS");
  if (!names) return false;
  std::stringstream list(names);
  std::string name;
  while (std::getline(list, name, ','))
    if (name == op.name) return true;
  return false;
}

// "1x3x224x224 float32, 64x3x7x7 float32": an operator's input shapes, for the trials file.
std::string ShapesText(const OpSpec& op) {
  std::string text;
  for (const TensorDesc& t : op.inputs) {
    if (!text.empty()) text += ", ";
    std::string dims;
    for (int64_t d : t.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    text += (dims.empty() ? "scalar" : dims) + " " + t.dtype;
  }
  return text;
}

// What the trials file and the listeners see of an operator's trial.
TrialRecord TrialRecordOf(const TrialEvent& e) {
  TrialRecord t;
  t.trial = e.trial;
  t.budget = e.budget;
  t.template_id = e.template_id;
  t.mode = TuneModeName(e.mode);
  t.policy = e.policy_text;
  t.time_us = e.result.time.median_us;
  t.spread_us = e.result.time.spread_us;
  t.verdict = e.result.ok ? "ok" : e.result.failure.empty() ? "failed" : e.result.failure;
  t.best_us = e.best_us;
  t.baseline_us = e.default_us;
  return t;
}

// The entry of the tuning's winner; with `keep_baseline`, of the built-in choice itself (measured as
// the baseline, before and after alike).
Entry OpWinnerEntry(const OpSpec& op, const TuneOutcome& o, const Measurement& baseline, const std::string& bank_id, bool keep_baseline = false) {
  WinnerTemplate how = keep_baseline ? WinnerTemplate{o.baseline_template_id, o.baseline_template_version, o.baseline_mode, o.baseline_policy}
                                     : WinnerTemplate{o.template_id, o.template_version, o.mode, o.policy};
  return WinnerEntry(EntryKind::kOp, op.op_type, op.canonical.text, std::move(how), baseline, keep_baseline ? baseline : o.best_time,
                     o.trials, o.strategy, bank_id);
}

}  // namespace

Status ReadTuneOpsFile(const std::string& path, std::vector<std::string>* names, std::vector<std::string>* types) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read --tune-ops-file " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Status::InvalidInput(path + ": expected {\"tune_ops_name\": [...], \"tune_ops_type\": [...]}");
  for (const auto& [field, value] : j.items()) {
    if (field != "tune_ops_name" && field != "tune_ops_type")
      return Status::InvalidInput(path + ": unknown field \"" + field + "\" (tune_ops_name, tune_ops_type)");
    if (!value.is_array()) return Status::InvalidInput(path + ": \"" + field + "\" must be a list of strings");
    for (const auto& v : value) {
      if (!v.is_string()) return Status::InvalidInput(path + ": \"" + field + "\" must be a list of strings");
      (field == "tune_ops_name" ? names : types)->push_back(v.get<std::string>());
    }
  }
  return Status::Ok();
}

Result<std::optional<OpatJobState>> LatestOpatJob(const Bank& bank) {
  auto stored = PeekLatestJob(bank, JobTypeOf(2).latest_key);
  if (!stored.ok()) return stored.status();
  if (!*stored) return std::optional<OpatJobState>();
  auto cp = Checkpoint::FromJson((*stored)->second, (*stored)->first);
  if (!cp.ok()) return cp.status();
  OpatJobState s;
  s.job_name = cp->job_name;
  s.tuning_name = cp->tuning_name;
  s.ops_path = cp->ops_path;
  s.result_path = cp->result_path;
  s.finished = cp->finished;
  s.elapsed_s = cp->elapsed_s;
  s.ops = cp->op_keys.size();
  s.records = std::move(cp->records);
  return std::optional<OpatJobState>(std::move(s));
}

Result<OpatJobReport> RunOpatJob(const OpatJobOptions& options) {
  OpenOptions open;
  open.mode = OpenMode::kCreateIfMissing;
  open.soc_version = options.soc_version;
  open.fingerprint = options.fingerprint;
  const std::string bank_dir = BankDirUnder(options.bank_root, options.soc_version);

  // Resume or start the checkpoint before anything is tuned.
  Checkpoint cp;
  std::unique_ptr<Bank> bank;
  if (options.reload) {
    auto opened = Bank::Open(bank_dir, {OpenMode::kReadWrite, options.soc_version, options.fingerprint});
    if (!opened.ok()) return opened.status().WithContext("--reload");
    bank = std::move(opened.value());
    auto stored = ReadStoredJob(*bank, *options.reload, JobTypeOf(2).latest_key, "tuning job", bank_dir);
    if (!stored.ok()) return stored.status();
    auto parsed = Checkpoint::FromJson(stored->second, stored->first);
    if (!parsed.ok()) return parsed.status();
    cp = std::move(parsed.value());
  }
  const std::string ops_path = options.ops_path.empty() ? cp.ops_path : options.ops_path;
  if (ops_path.empty()) return Status::InvalidInput("--singleop is required");
  auto ops = ReadOpList(ops_path);
  if (!ops.ok()) return ops.status();
  // Every op must be tunable before a bank directory or a result file exists.
  TB_RETURN_IF_ERROR(CheckOpList(ops_path, *ops));
  std::vector<std::string> keys;
  for (const auto& op : *ops) keys.push_back(FormatKey(EntryKind::kOp, op.canonical.key));
  if (options.reload) {
    if (cp.op_keys != keys)
      return Status::Refused("--reload " + cp.job_name + ": " + ops_path + " is not the operator list the job was started with (" + cp.ops_path + ")");
    if (cp.finished) {
      return Status::Refused("job " + cp.job_name + " already finished; its results are in " + cp.result_path);
    }
  } else {
    // The output directory first: a run refused for it leaves no bank behind.
    auto stamp = NewJobStamp(JobTypeOf(2), options.output_dir);
    if (!stamp.ok()) return stamp.status();
    auto opened = Bank::Open(bank_dir, open);
    if (!opened.ok()) return opened.status();
    bank = std::move(opened.value());
    cp.job_name = stamp->job_name;
    cp.tuning_name = options.tuning_name.empty() ? Stem(ops_path) : options.tuning_name;
    cp.model_baseline_ms = options.model_baseline_ms;
    cp.ops_path = ops_path;
    cp.op_keys = keys;
    cp.result_path = stamp->result_path;
  }

  std::map<size_t, OpRecord> done;
  size_t failed_before = 0;
  for (const auto& r : cp.records) {
    done[r.index] = r;
    failed_before += r.status == "failed";
  }
  std::vector<size_t> todo;
  for (size_t i = 0; i < ops->size(); ++i)
    if (Selected((*ops)[i], options.tune_op_names, options.tune_op_types) && !done.count(i)) todo.push_back(i);
  const size_t selected_total = todo.size() + done.size();
  TaskLoop loop({&JobTypeOf(2), cp.job_name, cp.tuning_name, cp.result_path, selected_total, cp.elapsed_s, done.size(), failed_before,
                 options.listeners, options.on_task_done,
                 {{"soc_version", options.soc_version}, {"model", ops_path},
                  {"model_baseline_ms", cp.model_baseline_ms ? nlohmann::json(*cp.model_baseline_ms) : nlohmann::json()}}});
  auto elapsed = [&] { return loop.Elapsed(); };
  auto records_in_order = [&] {
    std::vector<OpRecord> v;
    for (const auto& [i, r] : done) v.push_back(r);
    return v;
  };
  auto checkpoint = [&](WriteTxn& txn) -> Status {
    cp.records = records_in_order();
    cp.elapsed_s = elapsed();
    return loop.PutCheckpoint(txn, DumpJson(cp.ToJson()));
  };
  TB_RETURN_IF_ERROR(bank->Write(checkpoint));
  TB_RETURN_IF_ERROR(loop.WriteResult(OpatResultJson(cp.tuning_name, elapsed(), records_in_order(), false, cp.model_baseline_ms)));
  loop.JobStarted();
  std::map<std::string, size_t> first_of_key;  // a key tuned earlier in this list is not tuned twice
  for (const auto& [i, r] : done) first_of_key.emplace(r.key, i);

  std::vector<std::pair<Entry, std::optional<Entry>>> builtin_won;  // keys whose built-in choice no candidate beat (no entry
                                                                   // stored), with the stale entry they had
  for (size_t n = 0; n < todo.size(); ++n) {
    const size_t i = todo[n];
    const OpSpec& op = (*ops)[i];
    const auto op_start = std::chrono::steady_clock::now();
    loop.TaskStarted(i, op.name, op.op_type);
    OpRecord rec;
    rec.index = i;
    rec.op_name = op.name;
    rec.op_type = op.op_type;
    rec.key = keys[i];
    auto found = bank->Find(EntryKind::kOp, op.canonical.text);
    if (!found.ok()) return found.status();
    const std::optional<Entry> entry = found.value();
    std::optional<Entry> winner;         // to store: it beat the baseline
    std::optional<Entry> builtin_entry;  // to store (keep_builtin_wins): the built-in choice beat every candidate
    nlohmann::json detail = {{"key", rec.key}, {"shapes", ShapesText(op)}};  // the trials file's
    bool stale = false;
    if (entry) {
      const OpTemplate* t = TemplateById(entry->template_id);
      // An entry in a precision this job does not allow (bf16, in a force_fp32 job) is tuned again.
      stale = !t || t->version() != entry->template_version || !PrecisionAllowed(options.tune.precision_mode, entry->policy);
    }
    auto earlier = first_of_key.find(rec.key);
    if (earlier != first_of_key.end() && done.count(earlier->second) && !(entry && !stale && options.repeat_tune)) {
      const OpRecord& first = done[earlier->second];
      rec.status = first.status == "failed" || first.status == "unsatisfied" ? first.status : "hit";
      rec.before_us = first.ResultUs();
      rec.after_us = rec.before_us;
      rec.failure = first.failure;
    } else if (entry && !stale && !options.repeat_tune) {
      rec.status = "hit";
      rec.before_us = rec.after_us = entry->after.median_us;
    } else {
      TuneOptions tune = options.tune;
      if (options.in_context) tune.measure_in_context = options.in_context(op);
      // At a shape never tuned, the entry of the nearest shape of the same operator is where the
      // search starts (a batch or sequence length the bank has not seen).
      if (auto near = LookupPolicy(*bank, op.canonical, EngineTemplateVersions(), /*nearest=*/true);
          near.ok() && near->state == LookupState::kNearest && near->entry)
        tune.starting_points.push_back({near->entry->template_id, near->entry->policy});
      if (options.time_budget_s > 0) {
        // What is left of the budget, shared among the operators left by their weights (equal
        // shares without weights).
        double left = options.time_budget_s - loop.ElapsedThisRun(), weight_left = 0;
        auto weight = [&](size_t op) { return op < options.budget_weights.size() ? std::max(options.budget_weights[op], 1e-9) : 1.0; };
        for (size_t k = n; k < todo.size(); ++k) weight_left += weight(todo[k]);
        tune.deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, left) * weight(i) / weight_left * 1000));
      }
      auto outcome = FailureInjectedFor(op) ? Result<TuneOutcome>(Status::IoError("failure injected by TILEBANK_TEST_FAIL_OPS"))
                                            : TuneOp(op, tune, [&](const TrialEvent& e) { loop.Trial(TrialRecordOf(e)); });
      if (!outcome.ok()) {
        rec.status = "failed";
        rec.failure = outcome.status().message();
      } else if (!outcome->found) {
        rec.status = "failed";
        rec.failure = outcome->failure_samples.empty() ? "no candidate ran correctly" : outcome->failure_samples.front();
      } else {
        const TuneOutcome& o = *outcome;
        detail.update({{"template", o.template_id}, {"mode", TuneModeName(o.mode)}, {"trials", o.trials}, {"failures", o.failures},
                       {"strategy", o.strategy}, {"builtin_template", o.baseline_template_id}, {"policy", PolicyText(o.policy)}});
        const bool have_entry = entry && !stale;
        Measurement baseline = have_entry ? entry->after : o.default_ok ? o.default_time : o.best_time;
        rec.before_us = baseline.median_us;
        rec.after_us = o.best_time.median_us;
        rec.mode = TuneModeName(o.mode);
        bool better = o.best_time.median_us < baseline.median_us * (1.0 - options.min_gain) || (!o.default_ok && !have_entry);
        rec.status = better ? (entry ? "update" : "add") : (have_entry ? "reserved" : "unsatisfied");
        if (better) winner = OpWinnerEntry(op, o, baseline, bank->meta_at_open().bank_id);
        else if (!have_entry && o.default_ok && options.keep_builtin_wins)
          builtin_entry = OpWinnerEntry(op, o, baseline, bank->meta_at_open().bank_id, /*keep_baseline=*/true);
        else if (!have_entry && o.default_ok)
          builtin_won.push_back({OpWinnerEntry(op, o, baseline, bank->meta_at_open().bank_id, /*keep_baseline=*/true), entry});
      }
    }
    if (rec.status != "hit") rec.tune_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - op_start).count();
    // The winner (if any) and the checkpoint commit together: a kill never separates them.
    TB_RETURN_IF_ERROR(bank->Write([&](WriteTxn& txn) -> Status {
      done[i] = rec;  // the body may run again when the map grows
      if (winner) {
        auto put = txn.Put(*winner, stale ? PutPolicy::kOverwrite : PutPolicy::kKeepFaster);
        if (!put.ok()) return put.status();
        // Another process stored a faster entry meanwhile: ours was not kept.
        if (put.value() == PutOutcome::kKept) done[i].status = entry ? "reserved" : "unsatisfied";
        else cp.replaced.try_emplace(rec.key, entry);
      }
      if (builtin_entry) {
        auto put = txn.Put(*builtin_entry, PutPolicy::kKeepFaster);
        if (!put.ok()) return put.status();
        if (put.value() != PutOutcome::kKept) cp.replaced.try_emplace(rec.key, entry);
      }
      return checkpoint(txn);
    }));
    rec = done[i];
    first_of_key.emplace(rec.key, i);
    TB_RETURN_IF_ERROR(loop.WriteResult(OpatResultJson(cp.tuning_name, elapsed(), records_in_order(), false, cp.model_baseline_ms)));
    if (loop.TaskDone(*bank, rec.status, rec.failure, rec.before_us, rec.ResultUs(), detail) && n + 1 < todo.size()) {
      loop.JobDone(/*stopped=*/true);
      OpatJobReport report;
      report.job_name = cp.job_name;
      report.tuning_name = cp.tuning_name;
      report.result_path = cp.result_path;
      report.result = OpatResultJson(cp.tuning_name, elapsed(), records_in_order(), false, cp.model_baseline_ms);
      report.replaced = cp.replaced;
      report.stopped = true;
      return report;
    }
  }

  // A key whose built-in choice won has no entry, so a run would give it the entry of its nearest
  // shape, which lost here: where the bank now has such a neighbour, the built-in choice becomes
  // the key's entry (its status stays "unsatisfied": nothing beat it).
  std::vector<const std::pair<Entry, std::optional<Entry>>*> builtin_kept;
  for (const auto& won : builtin_won) {
    const Entry& e = won.first;
    auto near = LookupPolicy(*bank, CanonicalDescriptor{EntryKind::kOp, e.op_type, e.descriptor, e.key()}, EngineTemplateVersions(), true);
    if (near.ok() && near->state == LookupState::kNearest) builtin_kept.push_back(&won);
  }
  cp.finished = true;
  const ReplacedEntries replaced_before_end = cp.replaced;
  TB_RETURN_IF_ERROR(bank->Write([&](WriteTxn& txn) -> Status {
    cp.replaced = replaced_before_end;  // the body may run again when the map grows
    for (const auto* kept : builtin_kept) {
      auto put = txn.Put(kept->first, PutPolicy::kKeepFaster);
      if (!put.ok()) return put.status();
      if (put.value() != PutOutcome::kKept) cp.replaced.try_emplace(FormatKey(EntryKind::kOp, kept->first.key()), kept->second);
    }
    return checkpoint(txn);
  }));
  OpatJobReport report;
  report.job_name = cp.job_name;
  report.tuning_name = cp.tuning_name;
  report.result_path = cp.result_path;
  auto records = records_in_order();
  report.result = OpatResultJson(cp.tuning_name, elapsed(), records, true, cp.model_baseline_ms);
  report.replaced = cp.replaced;
  TB_RETURN_IF_ERROR(loop.WriteResult(report.result));
  loop.JobDone(/*stopped=*/false);
  for (const auto& r : records) report.any_failed |= r.status == "failed";
  const ListTimes times = SumTimes(records);
  report.improvement_percent = ImprovementPercent(times.before_us, times.after_us);
  return report;
}

Result<nlohmann::json> TakeBackOpatJob(Bank& bank, const std::string& job_name, const std::set<std::string>* only) {
  auto stored = ReadStoredJob(bank, job_name, JobTypeOf(2).latest_key, "tuning job", bank.dir());
  if (!stored.ok()) return stored.status();
  auto cp = Checkpoint::FromJson(stored->second, stored->first);
  if (!cp.ok()) return cp.status();
  Checkpoint taken = *cp;
  ReplacedEntries going;
  for (const auto& [key, earlier] : cp->replaced)
    if (!only || only->count(key)) going.emplace(key, earlier);
  for (OpRecord& r : taken.records)
    if (going.count(r.key) && (r.status == "add" || r.status == "update")) {
      r.status = r.status == "add" ? "unsatisfied" : "reserved";
    }
  for (const auto& [key, earlier] : going) taken.replaced.erase(key);
  TB_RETURN_IF_ERROR(bank.Write([&](WriteTxn& txn) -> Status {
    TB_RETURN_IF_ERROR(TakeBack(txn, EntryKind::kOp, going));
    return txn.PutJob(taken.job_name, DumpJson(taken.ToJson()));
  }));
  nlohmann::json result = OpatResultJson(taken.tuning_name, taken.elapsed_s, taken.records, taken.finished, taken.model_baseline_ms);
  TB_RETURN_IF_ERROR(WriteJsonAtomically(taken.result_path, result));
  return result;
}

Status AddToOpatJob(Bank& bank, OpatJobReport* job, const std::vector<Entry>& entries) {
  auto stored = ReadStoredJob(bank, job->job_name, JobTypeOf(2).latest_key, "tuning job", bank.dir());
  if (!stored.ok()) return stored.status();
  auto read = Checkpoint::FromJson(stored->second, stored->first);
  if (!read.ok()) return read.status();
  Checkpoint cp;
  TB_RETURN_IF_ERROR(bank.Write([&](WriteTxn& txn) -> Status {
    cp = *read;  // the body may run again when the map grows
    for (const Entry& e : entries) {
      const std::string key = FormatKey(EntryKind::kOp, e.key());
      auto earlier = txn.Get(EntryKind::kOp, e.key());
      if (!earlier.ok()) return earlier.status();
      auto put = txn.Put(e, PutPolicy::kOverwrite);
      if (!put.ok()) return put.status();
      cp.replaced.try_emplace(key, earlier.value());
      const bool added = !cp.replaced.at(key).has_value();
      for (OpRecord& r : cp.records)
        if (r.key == key && r.status != "hit") {  // the key's first record (later ones are hits)
          r.status = added ? "add" : "update";
          r.mode = TuneModeName(e.tune_mode);
          r.before_us = e.before.median_us;
          r.after_us = e.after.median_us;
          break;
        }
    }
    return txn.PutJob(cp.job_name, DumpJson(cp.ToJson()));
  }));
  job->result = OpatResultJson(cp.tuning_name, cp.elapsed_s, cp.records, cp.finished, cp.model_baseline_ms);
  TB_RETURN_IF_ERROR(WriteJsonAtomically(cp.result_path, job->result));
  job->replaced = cp.replaced;
  return Status::Ok();
}

}  // namespace tilebank::engine
