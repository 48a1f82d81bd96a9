// `tilebank tune`: the tuning jobs. Job type 2 (OPAT) tunes an operator list; AOE's option
// spellings (--job_type, -j, --tune_ops_file, REPEAT_TUNE=True) are accepted too.
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "engine/catalog/builtin_choice.h"
#include "engine/jobs/job.h"
#include "engine/jobs/opat_job.h"
#include "engine/ir/onnx_import.h"
#include "engine/core/soc_version.h"
#include "repo/bank_location.h"
#include "tools/batch_command.h"
#include "tools/cli_common.h"

namespace tilebank::cli {

namespace {

struct TuneFlags {
  int job_type = 0;
  std::string model, input_shape, subgraphs, gradients, measured;
  bool print_plans = false;
  size_t max_segments = 8;
  int framework = 5;
  std::string singleop, bank, soc, tune_mode = "GA,RL", modes = "schedule,format,impl", tune_ops_file, output;
  std::string precision_mode = "force_fp32";
  int trials = 48;
  int patience = 12;
  double time_budget = 0;
  bool repeat_tune = false;
  bool quiet = false;
  std::string reload = "\x01";  // sentinel: not given
  uint64_t seed = 1;
  std::string model_list, gradients_list, plan, shard, local_dir;  // a batch (tools/batch_command.h)
};


Result<std::vector<TuneMode>> ParseModes(const std::string& text) {
  std::vector<TuneMode> modes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    for (auto& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (item == "schedule") modes.push_back(TuneMode::kSchedule);
    else if (item == "format") modes.push_back(TuneMode::kFormat);
    else if (item == "impl") modes.push_back(TuneMode::kImpl);
    else return Status::InvalidInput("--modes: unknown mode '" + item + "' (schedule, format, impl)");
  }
  if (modes.empty()) return Status::InvalidInput("--modes: give at least one of schedule, format, impl");
  return modes;
}

// The flags every job type checks the same way: --framework, --trials, --time-budget.
Status CheckSharedFlags(const TuneFlags& f) {
  if (f.framework != 5) return Status::InvalidInput("--framework " + std::to_string(f.framework) + ": only ONNX models (--framework 5) are read");
  if (f.trials < 1) return Status::InvalidInput("--trials must be at least 1");
  if (f.patience < 0) return Status::InvalidInput("--patience must be 0 (never stop early) or more");
  if (f.time_budget < 0) return Status::InvalidInput("--time-budget must not be negative");
  return engine::DefaultPoliciesFromEnvironment().status();  // the tuner's baseline
}

// Where every job type tunes: the bank, this machine's soc_version (another is refused), the
// output directory (--output, else ASCEND_WORK_PATH, else here) and --repeat-tune / REPEAT_TUNE.
using engine::JobPlace;

// `measures_here`: the job measures this machine, so --soc may only name its soc_version.
Result<JobPlace> JobPlaceOf(const TuneFlags& f, bool measures_here = true) {
  JobPlace p;
  p.bank_root = ResolveBankRoot(f.bank);
  p.soc_version = f.soc.empty() ? HostSocVersion() : f.soc;
  if (measures_here && p.soc_version != HostSocVersion())
    return Status::Refused("--soc " + p.soc_version + ": tuning measures this machine, whose soc_version is " + HostSocVersion());
  p.fingerprint = HostFingerprint();
  const char* work = std::getenv("ASCEND_WORK_PATH");
  p.output_dir = !f.output.empty() ? f.output : work && *work ? work : ".";
  const char* repeat = std::getenv("REPEAT_TUNE");
  p.repeat_tune = f.repeat_tune || (repeat && (std::string(repeat) == "True" || std::string(repeat) == "true" || std::string(repeat) == "1"));
  return p;
}

// Runs the request's job and prints what it reports: its result file, its lines and AOE's closing
// line. Exit 1 when a task failed to tune (the result file lists it).
int RunAndReport(int job_type, const engine::JobRequest& r) {
  auto outcome = engine::FindJob(job_type)->Run(r);
  if (!outcome.ok()) return Fail(outcome.status());
  if (r.print_plans) {
    std::cout << outcome->plans.dump(1) << "\n";
    return kExitOk;
  }
  std::cout << "result file: " << outcome->result_path << "\n";
  for (const std::string& line : outcome->lines) std::cout << line << "\n";
  std::printf("%s process finished. Performance improved by %s\n", outcome->tuning_name.c_str(), outcome->improvement.c_str());
  return outcome->any_failed ? kExitFound : kExitOk;
}

// `tune` with --model-list, --plan or --shard: one worker of a batch, or the whole batch here.
int RunBatchWorker(const TuneFlags& f) {
  if (!engine::FindJobType(f.job_type) && !(f.job_type == 0 && !f.plan.empty()))
    return Fail(Status::InvalidInput("--model-list, --gradients-list, --plan and --shard batch operators (-j 2), subgraphs (-j 1) "
                                     "or gradient fusion problems (-j 4)"));
  if (!f.measured.empty() || f.print_plans || f.max_segments != 8)
    return Fail(Status::InvalidInput("a batch takes no --measured, --print-plans or --max-segments (its gradient problems are planned "
                                     "offline with at most 8 segments)"));
  if (!f.subgraphs.empty() || !f.tune_ops_file.empty() || f.reload != "\x01" || f.time_budget > 0 || f.repeat_tune || !f.output.empty() ||
      f.tune_mode != "GA,RL" || f.modes != "schedule,format,impl" || f.precision_mode != TuneFlags{}.precision_mode)
    return Fail(Status::InvalidInput("a batch takes no --subgraphs, --tune-ops-file, --reload, --time-budget, --repeat-tune, --output, "
                                     "--tune-mode, --modes or --precision-mode (a worker started again goes on where its shard stopped; results go "
                                     "under the bank root)"));
  if (Status s = CheckSharedFlags(f); !s.ok()) return Fail(s);
  BatchInputFlags in;
  in.job_type = f.job_type;
  in.model = f.model;
  in.model_list = f.model_list;
  in.singleop = f.singleop;
  in.gradients = f.gradients;
  in.gradients_list = f.gradients_list;
  in.input_shape = f.input_shape;
  in.soc = f.soc;
  in.trials = f.trials;
  in.seed = f.seed;
  in.quiet = f.quiet;
  if (!f.plan.empty()) {
    auto plan = engine::ReadBatchPlan(f.plan);
    if (!plan.ok()) return Fail(plan.status());
    in.job_type = f.job_type ? f.job_type : plan->job_type;
    if (plan->job_type != in.job_type)
      return Fail(Status::InvalidInput("-j " + std::to_string(f.job_type) + ": the plan " + f.plan + " is for job type " + std::to_string(plan->job_type)));
  }
  return RunBatchTune(in, f.plan, f.shard, f.bank, f.local_dir);
}

// The flag's name: "--model" of "--model M.onnx".
std::string FlagName(const std::string& usage) { return usage.substr(0, usage.find(' ')); }

bool Lists(const std::vector<std::string>& usages, const std::string& flag) {
  for (const std::string& u : usages)
    if (FlagName(u) == flag) return true;
  return false;
}

std::string TypeText(const engine::JobType& t) { return "--job-type " + std::to_string(t.id) + " (" + t.name + ")"; }

// The inputs and job-specific options of `tune`, each with the value given ("" when not given).
std::vector<std::pair<std::string, std::string>> GivenInputs(const TuneFlags& f) {
  return {{"--model", f.model}, {"--singleop", f.singleop}, {"--subgraphs", f.subgraphs}, {"--gradients", f.gradients}};
}
std::vector<std::string> GivenOptions(const TuneFlags& f) {
  std::vector<std::string> given;
  const TuneFlags defaults;
  if (!f.tune_ops_file.empty()) given.push_back("--tune-ops-file");
  if (f.tune_mode != defaults.tune_mode) given.push_back("--tune-mode");
  if (f.modes != defaults.modes) given.push_back("--modes");
  if (f.precision_mode != defaults.precision_mode) given.push_back("--precision-mode");
  if (!f.measured.empty()) given.push_back("--measured");
  if (f.print_plans) given.push_back("--print-plans");
  if (f.max_segments != defaults.max_segments) given.push_back("--max-segments");
  return given;
}

// The flags `type` takes (engine/jobs/job_types.h): one input, or --reload when it is resumable,
// and no other job type's options. The message names the job type a misplaced flag is for.
Status CheckJobFlags(const engine::JobType& type, const TuneFlags& f) {
  const bool reload = f.reload != "\x01";
  auto misplaced = [&](const std::string& flag) {
    std::string owner;
    for (const engine::JobType& other : engine::JobTypes())
      if (Lists(other.inputs, flag) || Lists(other.own_options, flag)) owner += (owner.empty() ? "" : " or ") + TypeText(other);
    return Status::InvalidInput(flag + " is not for " + TypeText(type) + ": it is for " + owner);
  };
  size_t inputs = 0;
  for (const auto& [flag, value] : GivenInputs(f)) {
    if (value.empty()) continue;
    if (!Lists(type.inputs, flag)) return misplaced(flag);
    ++inputs;
  }
  for (const std::string& flag : GivenOptions(f))
    if (!Lists(type.own_options, flag)) return misplaced(flag);
  std::string choices;
  for (const std::string& u : type.inputs) choices += (choices.empty() ? "" : " or ") + u;
  if (reload && !type.resumable) return Status::InvalidInput(TypeText(type) + " plans in one step: there is no job to --reload");
  if (reload && inputs > 0) return Status::InvalidInput("--reload goes on with a job's own input: give no " + choices);
  if (!reload && inputs != 1)
    return Status::InvalidInput(TypeText(type) + " takes one input: " + choices + (type.resumable ? " (or --reload to go on with a stopped job)" : ""));
  if (!f.input_shape.empty() && f.model.empty()) return Status::InvalidInput("--input-shape is for a model (--model M.onnx)");
  return CheckSharedFlags(f);
}

// Runs one job of the type -j names, with the flags that type takes.
int RunJob(const engine::JobType& type, const TuneFlags& f) {
  if (Status s = CheckJobFlags(type, f); !s.ok()) return Fail(s);
  auto place = JobPlaceOf(f, type.measures_here);
  if (!place.ok()) return Fail(place.status());
  engine::JobRequest r;
  for (const auto& [flag, value] : GivenInputs(f))
    if (!value.empty()) r.input = value;
  r.place = *place;
  auto shapes = engine::model::ParseInputShapes(f.input_shape);
  if (!shapes.ok()) return Fail(shapes.status());
  r.input_shapes = *shapes;
  if (f.reload != "\x01") r.reload = f.reload;
  r.time_budget_s = f.time_budget;
  if (!f.tune_ops_file.empty()) {
    Status s = engine::ReadTuneOpsFile(f.tune_ops_file, &r.tune_op_names, &r.tune_op_types);
    if (!s.ok()) return Fail(s);
  }
  r.tune.tune_mode = f.tune_mode;
  if (f.tune_mode != "GA,RL" && f.tune_mode != "RL,GA" && !engine::ParseStrategyKind(f.tune_mode).ok())
    return Fail(Status::InvalidInput("--tune-mode " + f.tune_mode + ": expected GA, RL, GA,RL, random or exhaustive"));
  auto modes = ParseModes(f.modes);
  if (!modes.ok()) return Fail(modes.status());
  r.tune.modes = modes.value();
  auto precision = engine::ParsePrecisionMode(f.precision_mode);
  if (!precision.ok()) return Fail(precision.status());
  r.tune.precision_mode = *precision;
  r.tune.trials = f.trials;
  r.tune.patience = f.patience;
  r.tune.seed = f.seed;
  r.max_segments = f.max_segments;
  r.measured_path = f.measured;
  r.print_plans = f.print_plans;
  r.listeners = ProgressListeners(f.quiet);
  return RunAndReport(type.id, r);
}

int RunTune(const TuneFlags& f) {
  if (!f.model_list.empty() || !f.gradients_list.empty() || !f.plan.empty() || !f.shard.empty()) return RunBatchWorker(f);
  if (!f.local_dir.empty()) return Fail(Status::InvalidInput("--local-dir is for a batch worker (--plan, --shard, --model-list or --gradients-list)"));
  if (f.job_type == 0) return Fail(Status::InvalidInput("--job-type (-j) is required: " + engine::JobTypeChoices()));
  const engine::JobType* type = engine::FindJobType(f.job_type);
  if (!type) return Fail(Status::InvalidInput("--job-type must be " + engine::JobTypeChoices() + ", not " + std::to_string(f.job_type)));
  return RunJob(*type, f);
}

}  // namespace

void RegisterTuneCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* tune = app->add_subcommand("tune", "tune a model's subgraphs (job type 1, SGAT), operators (job type 2, OPAT) or gradient fusion (job type 4, GDAT) and store the winners in the bank");
  tune->add_option("-j,--job-type,--job_type", flags->job_type, "2: operator tuning (OPAT); 1: subgraph tuning (SGAT); 4: gradient fusion (GDAT); with --plan, the plan's");
  tune->add_option("--gradients", flags->gradients, "job type 4: a gradient profile (JSON: gradients in ready order, the AllReduce sweep) to plan from");
  tune->add_option("--measured", flags->measured, "job type 4: plans measured in the running job (JSON); the measured fastest is kept");
  tune->add_flag("--print-plans", flags->print_plans, "job type 4: print every plan with its prediction as JSON; write nothing");
  tune->add_option("--max-segments,--max_segments", flags->max_segments, "job type 4: AllReduce segments at most (AOE/HCCL: 8)")->capture_default_str();
  tune->add_option("--singleop", flags->singleop, "ATC-style single-op description list (JSON)");
  tune->add_option("--model-list,--model_list", flags->model_list, "a batch: a file naming one ONNX model a line, `path [input shapes]`");
  tune->add_option("--gradients-list,--gradients_list", flags->gradients_list,
                   "a batch of job type 4: a file naming one gradient profile a line");
  tune->add_option("--local-dir,--local_dir", flags->local_dir,
                   "a batch worker: tune each shard's bank in this node-local directory and publish it to the bank root after each task "
                   "(for a bank root on NFS or Lustre)");
  tune->add_option("--plan", flags->plan, "a batch's PLAN.json (tilebank batch plan): its inputs and shards");
  tune->add_option("--shard", flags->shard, "tune one shard of the batch: I/N, I (with --plan) or mpi (the MPI rank); BANK_ROOT/shards/<I>/")
      ->type_name("I/N|mpi");
  tune->add_option("-m,--model", flags->model, "an ONNX model: tune its operators, measuring the whole model before and after");
  tune->add_option("--subgraphs", flags->subgraphs, "job type 1: a subgraph file (run --dump writes DIR/aoe_dump/<model>_subgraphs.json) to tune without the model");
  tune->add_option("-f,--framework", flags->framework, "the model's framework: 5 (ONNX), the only one read")->capture_default_str();
  tune->add_option("--input-shape,--input_shape", flags->input_shape, "shapes of the model's dynamic inputs: \"name:d0,d1,...;name2:...\"");
  tune->add_option("--bank", flags->bank, "bank root (default: TUNE_BANK_PATH, ASCEND_CACHE_PATH/aoe_data, ~/.local/share/tilebank)");
  tune->add_option("--soc,--soc-version", flags->soc, "soc_version (must be this host's: " + HostSocVersion() + ")");
  tune->add_option("--tune-mode,--tune_mode", flags->tune_mode, "GA, RL, GA,RL (GA for cube ops, RL for vector ops), random or exhaustive")
      ->capture_default_str();
  tune->add_option("--modes", flags->modes, "tune modes, comma-separated: schedule, format, impl")->capture_default_str();
  tune->add_option("--precision-mode,--precision_mode", flags->precision_mode,
                   "job type 2: force_fp32 (every kernel in float32), or allow_fp32_to_bf16 (also try kernels that read operands as "
                   "bfloat16 and sum in float32, where the CPU has bf16 dot products; checked within bf16's tolerance, kept only when faster)")
      ->capture_default_str();
  tune->add_option("--trials", flags->trials, "candidates measured per operator, all modes together")->capture_default_str();
  tune->add_option("--patience", flags->patience,
                   "stop searching a template's space for an operator after this many trials in a row that made it no faster (0: never)")
      ->capture_default_str();
  tune->add_option("--time-budget,--time_budget", flags->time_budget, "seconds for the whole job (0: no limit)");
  tune->add_option("--tune-ops-file,--tune_ops_file", flags->tune_ops_file,
                   "tune only these: {\"tune_ops_name\": [...], \"tune_ops_type\": [...]}");
  tune->add_flag("-q,--quiet", flags->quiet, "no progress on stderr (a live line on a terminal, a line per task elsewhere)");
  tune->add_flag("--repeat-tune,--repeat_tune", flags->repeat_tune, "re-tune operators already in the bank (or REPEAT_TUNE=True)");
  tune->add_option("--reload", flags->reload, "resume a killed job (default: the latest one in the bank)")->expected(0, 1)->default_str("");
  tune->add_option("--output", flags->output, "directory of the result file (default: ASCEND_WORK_PATH, else the working directory)");
  tune->add_option("--seed", flags->seed, "random seed of the strategies and inputs")->capture_default_str();
  tune->callback([flags, exit_code] { *exit_code = RunTune(*flags); });
}

}  // namespace tilebank::cli
