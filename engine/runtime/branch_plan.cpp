#include "engine/runtime/branch_plan.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tilebank::engine::model {
namespace {

constexpr int kBeforeTheSteps = -1;  // the writer of a value no step writes (a model input)

// Union-find over step indices.
struct Chains {
  std::vector<size_t> parent;
  explicit Chains(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t Find(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
};

// The places b (before step b; 0 and n included) where the values written before b and read from b
// on were all written by one step, or none is: a fork's input, a join's output.
std::vector<size_t> Cuts(const std::vector<BranchStepFacts>& steps, const std::vector<int>& writer, const std::vector<int>& last_read) {
  const size_t n = steps.size();
  // Values that die at each step, to leave the live set.
  std::vector<std::vector<int>> dies(n);
  for (size_t v = 0; v < last_read.size(); ++v)
    if (last_read[v] >= 0) dies[static_cast<size_t>(last_read[v])].push_back(static_cast<int>(v));
  std::map<int, int> live_by_writer;  // writer -> values of it alive
  auto add = [&](int v) { ++live_by_writer[writer[v]]; };
  auto remove = [&](int v) {
    auto it = live_by_writer.find(writer[v]);
    if (--it->second == 0) live_by_writer.erase(it);
  };
  std::vector<bool> alive(writer.size(), false);
  // Values read before any step writes them (model inputs) are alive from the start.
  for (size_t v = 0; v < writer.size(); ++v)
    if (writer[v] == kBeforeTheSteps && last_read[v] >= 0) {
      alive[v] = true;
      add(static_cast<int>(v));
    }
  std::vector<size_t> cuts = {0};
  for (size_t b = 1; b <= n; ++b) {
    const BranchStepFacts& s = steps[b - 1];
    for (int v : s.writes)
      if (v >= 0 && last_read[v] >= static_cast<int>(b) && !alive[v]) {
        alive[v] = true;
        add(v);
      }
    for (int v : dies[b - 1])
      if (alive[v]) {
        alive[v] = false;
        remove(v);
      }
    if (live_by_writer.size() <= 1 && cuts.back() != b) cuts.push_back(b);
  }
  if (cuts.back() != n) cuts.push_back(n);
  return cuts;
}

}  // namespace

BranchPlan PlanBranches(const std::vector<BranchStepFacts>& steps, double min_balance) {
  BranchPlan plan;
  const size_t n = steps.size();
  int values = 0;
  for (const BranchStepFacts& s : steps) {
    for (int v : s.reads) values = std::max(values, v + 1);
    for (int v : s.writes) values = std::max(values, v + 1);
  }
  std::vector<int> writer(values, kBeforeTheSteps), last_read(values, -1);
  for (size_t i = 0; i < n; ++i) {
    for (int v : steps[i].writes)
      if (v >= 0) writer[v] = static_cast<int>(i);
    for (int v : steps[i].reads)
      if (v >= 0) last_read[v] = std::max(last_read[v], static_cast<int>(i));
  }
  const std::vector<size_t> cuts = Cuts(steps, writer, last_read);
  Chains chains(n);  // the stretches are disjoint: a step is joined only to steps of its own
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    const size_t begin = cuts[c], stop = cuts[c + 1];
    auto keep_in_order = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) plan.order.push_back(i);
    };
    // The stretch's steps but its last (the join, when it reads two chains) into chains.
    if (stop - begin < 3) {
      keep_in_order(begin, stop);
      continue;
    }
    const size_t join = stop - 1;
    bool movable = true;
    for (size_t i = begin; i < join; ++i) {
      movable &= steps[i].movable;
      for (int v : steps[i].reads)
        if (v >= 0 && writer[v] >= static_cast<int>(begin)) chains.Join(i, static_cast<size_t>(writer[v]));
    }
    std::vector<size_t> joined;  // the chains the last step reads
    for (int v : steps[join].reads)
      if (v >= 0 && writer[v] >= static_cast<int>(begin)) joined.push_back(chains.Find(static_cast<size_t>(writer[v])));
    std::sort(joined.begin(), joined.end());
    joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
    const size_t end = joined.size() >= 2 ? join : stop;  // steps [begin, end) go into lanes
    if (end == stop) {
      movable &= steps[join].movable;
      if (!joined.empty()) chains.Join(join, joined.front());
    }
    std::map<size_t, double> cost_of;  // chain root -> cost
    for (size_t i = begin; i < end; ++i) cost_of[chains.Find(i)] += steps[i].cost;
    if (!movable || cost_of.size() < 2) {
      keep_in_order(begin, stop);
      continue;
    }
    // The heaviest chains first, each into the lighter lane.
    std::vector<std::pair<double, size_t>> by_cost;
    for (const auto& [root, cost] : cost_of) by_cost.push_back({cost, root});
    std::sort(by_cost.begin(), by_cost.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    double lane_cost[2] = {0, 0};
    std::map<size_t, int> lane_of;
    for (const auto& [cost, root] : by_cost) {
      const int lane = lane_cost[0] <= lane_cost[1] ? 0 : 1;
      lane_cost[lane] += cost;
      lane_of[root] = lane;
    }
    const double heavier = std::max(lane_cost[0], lane_cost[1]), lighter = std::min(lane_cost[0], lane_cost[1]);
    const double balance = heavier > 0 ? lighter / heavier : 0;
    if (balance < min_balance) {
      keep_in_order(begin, stop);
      continue;
    }
    BranchSection section;
    section.begin = plan.order.size();
    section.balance = balance;
    for (int lane = 0; lane < 2; ++lane) {
      if (lane == 1) section.split = plan.order.size();
      for (size_t i = begin; i < end; ++i)
        if (lane_of[chains.Find(i)] == lane) plan.order.push_back(i);
    }
    section.end = plan.order.size();
    plan.sections.push_back(section);
    keep_in_order(end, stop);
  }
  return plan;
}

bool ParseBranchMode(const std::string& text, BranchMode* mode) {
  if (text.empty() || text == "off") *mode = BranchMode::kOff;
  else if (text == "on") *mode = BranchMode::kOn;
  else return false;
  return true;
}

}  // namespace tilebank::engine::model
