// The makespan of a batch on many nodes, simulated from measured task times, with the shards the
// planner makes (engine/batch: CostBalancedShards on estimated costs, against
// CountBalancedShards).
//
//   build/batch_sim TASKS.json [--tasks-per-node T] [--shards-per-node S] [--nodes N,N,...] [--seed X]
//
// TASKS.json: [{"estimated_s": E, "measured_s": M}, ...], tasks of a batch that ran (batch_bench.py
// writes it from a plan and the batch's result file). A batch for n nodes has T * n tasks drawn
// from these pairs with replacement (a bootstrap: larger batches of tasks like the measured ones)
// and S * n shards. Nodes take the next shard in index order when they are free, as the tasks of a
// Slurm array start. Ideal is the sum of measured times over n; the table shows makespan / ideal
// for shards balanced by the estimates, by the measured times (a plan calibrated by a batch that
// measured every task: `batch plan --calibrate`), and by count.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/batch/batch_plan.h"

using tilebank::engine::CostBalancedShards;
using tilebank::engine::CountBalancedShards;

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "batch_sim: %s\n", what.c_str());
  std::exit(2);
}

struct TaskTime {
  double estimated_s = 0, measured_s = 0;
};

// Nodes pull shards in index order; each shard runs its tasks one after another.
double Makespan(const std::vector<std::vector<size_t>>& shards, const std::vector<TaskTime>& tasks, size_t nodes) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (size_t n = 0; n < nodes; ++n) free_at.push(0);
  double makespan = 0;
  for (const auto& shard : shards) {
    double t = free_at.top();
    free_at.pop();
    for (size_t i : shard) t += tasks[i].measured_s;
    makespan = std::max(makespan, t);
    free_at.push(t);
  }
  return makespan;
}

std::vector<size_t> ParseList(const std::string& text) {
  std::vector<size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t value = 0;
    try {
      value = std::stoul(item);
    } catch (...) {
      Die("--nodes " + text + ": expected positive whole numbers separated by commas");
    }
    if (value == 0) Die("--nodes " + text + ": a node count must be positive");
    out.push_back(value);
  }
  return out;
}

size_t Positive(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    const long value = std::stol(text, &used);
    if (used == text.size() && value > 0) return static_cast<size_t>(value);
  } catch (...) {
  }
  Die(flag + " " + text + ": expected a positive whole number");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Die("usage: batch_sim TASKS.json [--tasks-per-node T] [--shards-per-node S] [--nodes N,...] [--seed X]");
  size_t tasks_per_node = 24, shards_per_node = 4, seed = 1;
  std::vector<size_t> node_counts = {16, 64, 256, 1024};
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Die("missing value after " + flag);
    const std::string value = argv[++i];
    if (flag == "--tasks-per-node") tasks_per_node = Positive(flag, value);
    else if (flag == "--shards-per-node") shards_per_node = Positive(flag, value);
    else if (flag == "--nodes") node_counts = ParseList(value);
    else if (flag == "--seed") seed = Positive(flag, value);
    else Die("unknown argument " + flag);
  }
  std::ifstream in(argv[1]);
  if (!in) Die(std::string("cannot read ") + argv[1]);
  std::vector<TaskTime> measured;
  try {
    for (const auto& t : nlohmann::json::parse(in)) measured.push_back({t.at("estimated_s").get<double>(), t.at("measured_s").get<double>()});
  } catch (const std::exception& e) {
    Die(std::string(argv[1]) + ": " + e.what());
  }
  if (measured.empty()) Die(std::string(argv[1]) + " holds no task");

  std::printf("%zu measured tasks; per node: %zu tasks, %zu shards; nodes pull shards in index order\n", measured.size(),
              tasks_per_node, shards_per_node);
  std::printf("%8s %8s %10s %14s %16s %16s %16s\n", "nodes", "tasks", "shards", "ideal (s)", "cost-balanced", "calibrated", "count-balanced");
  std::mt19937_64 rng(seed);
  for (size_t nodes : node_counts) {
    std::uniform_int_distribution<size_t> pick(0, measured.size() - 1);
    std::vector<TaskTime> tasks(tasks_per_node * nodes);
    for (TaskTime& t : tasks) t = measured[pick(rng)];
    std::vector<double> estimates, times;
    double total = 0;
    for (const TaskTime& t : tasks) estimates.push_back(t.estimated_s), times.push_back(t.measured_s), total += t.measured_s;
    const size_t shards = shards_per_node * nodes;
    const double ideal = total / static_cast<double>(nodes);
    const double by_cost = Makespan(CostBalancedShards(estimates, shards), tasks, nodes);
    const double calibrated = Makespan(CostBalancedShards(times, shards), tasks, nodes);
    const double by_count = Makespan(CountBalancedShards(tasks.size(), shards), tasks, nodes);
    std::printf("%8zu %8zu %10zu %14.1f %15.3fx %15.3fx %15.3fx\n", nodes, tasks.size(), shards, ideal, by_cost / ideal, calibrated / ideal,
                by_count / ideal);
  }
  return 0;
}
