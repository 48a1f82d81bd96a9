// The batch inputs `tune` and `batch plan` share, and the worker `tune` runs with --model-list,
// --plan or --shard (tools/batch_command.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/batch/batch_plan.h"

namespace tilebank::cli {

struct BatchInputFlags {
  int job_type = 0;
  std::string model, model_list, singleop, gradients, gradients_list, input_shape, soc;
  int trials = 48;
  uint64_t seed = 1;
  std::vector<std::string> calibrate;  // `batch plan --calibrate`: earlier batches' result files
  bool quiet = false;                  // `tune --quiet`: no progress on stderr
};

// Adds -m, --model-list, --singleop, --gradients, --gradients-list, --input-shape, --soc, --trials
// and --seed (not -j).
void AddBatchInputFlags(CLI::App* command, BatchInputFlags* flags);
// The plan the inputs give with `shards` shards (the same on every machine).
Result<engine::BatchPlan> PlanFromInputs(const BatchInputFlags& flags, size_t shards);

// `tune` as a batch worker: the shards `shard` names ("I/N", "I" with a plan, "mpi"; empty: all
// of them, then the merge) into BANK_ROOT/shards/<i>/; under MPI rank 0 merges when every shard
// is done. Returns the exit code.
// `local_dir` (--local-dir): tune each shard's bank in node-local storage, publishing it to the
// bank root after each task.
int RunBatchTune(const BatchInputFlags& inputs, const std::string& plan_path, const std::string& shard, const std::string& bank,
                 const std::string& local_dir);

// Registers `tilebank batch plan | status | merge`.
void RegisterBatchCommands(CLI::App* app, int* exit_code);

}  // namespace tilebank::cli
