#include "engine/model/executor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <functional>
#include <map>
#include <set>

#include "engine/builder/builder.h"
#include "engine/builder/kernel_disk_cache.h"
#include "engine/ops/op_list_check.h"
#include "engine/templates/halide_fused_gemm.h"
#include "engine/templates/onednn_post_ops.h"
#include "engine/templates/op_template.h"
#include "engine/templates/templates.h"

namespace tilebank::engine::model {

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string t;
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? "x" : "") + std::to_string(shape[i]);
  return t.empty() ? "scalar" : t;
}

constexpr int64_t kAlignFloats = 16;  // 64-byte aligned tensors

}  // namespace

// One node's work at run time.
struct Executor::Step {
  enum class Kind { kAlias, kBasic, kDirect, kCopying } kind = Kind::kBasic;
  std::vector<int> inputs;  // value per kernel input
  int output = -1;
  BasicKernel basic;
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> constants;  // kCopying: constant inputs as tensors (by input index; empty if not constant)
  int in_place_input = -1;        // kDirect: the input the output may be placed over (Kernel::InPlaceInput)
};

Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::Load(Graph graph, const PolicyLookup& lookup, const FusionLookup& fusion) {
  std::unique_ptr<Executor> e(new Executor());
  e->graph_ = std::move(graph);
  // Constants nothing reads any more (weights replaced by folding) are dropped.
  std::vector<bool> read(e->graph_.values.size(), false);
  for (const Node& n : e->graph_.nodes)
    for (int v : n.inputs)
      if (v >= 0) read[v] = true;
  for (int v : e->graph_.outputs) read[v] = true;
  for (size_t v = 0; v < read.size(); ++v)
    if (!read[v]) e->graph_.values[v].constant.reset();
  {
    // Compiled kernels persist across processes (engine/builder/kernel_disk_cache.h).
    const std::string cache_dir = DefaultKernelCacheDir();
    KernelDiskCacheScope scope(cache_dir.empty() ? nullptr : &KernelDiskCacheAt(cache_dir));
    TB_RETURN_IF_ERROR(e->Bind(lookup, fusion));
  }
  TB_RETURN_IF_ERROR(e->HandOverLayouts());
  // Float copies of the constants that steps read from memory (direct kernels hold their own).
  e->constant_data_.resize(e->graph_.values.size());
  auto keep = [&](int v) {
    if (v < 0 || !e->graph_.IsConstant(v) || !e->constant_data_[v].empty()) return;
    e->constant_data_[v] = e->graph_.values[v].constant->AsTensor().data;
  };
  for (const auto& s : e->steps_)
    if (s->kind != Step::Kind::kDirect)
      for (int v : s->inputs) keep(v);
  for (int v : e->graph_.outputs) keep(v);
  for (size_t v = 0; v < e->graph_.values.size(); ++v)
    if (e->graph_.values[v].constant) e->constant_bytes_ += e->graph_.values[v].constant->size() * sizeof(float);
  e->PlanMemory();
  const uint64_t needed = e->arena_bytes() + e->constant_bytes_;
  if (needed > AvailableMemoryBytes())
    return Status::InvalidInput("the model needs about " + std::to_string(needed >> 20) + " MiB for its tensors and weights; this machine has " +
                                std::to_string(AvailableMemoryBytes() >> 20) + " MiB available");
  // 64-byte aligned, as the plan's offsets assume.
  const size_t bytes = (static_cast<size_t>(e->arena_floats_) * sizeof(float) + 63) / 64 * 64;
  e->arena_.reset(static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(bytes, 64))));
  if (!e->arena_) return Status::IoError("cannot allocate " + std::to_string(bytes >> 20) + " MiB for the model's tensors");
  std::memset(e->arena_.get(), 0, bytes);
  return e;
}

Result<bool> Executor::BindFused(const Subgraph& s, const FusionChoice& choice) {
  const int fused = choice.fused;
  const Node& anchor = graph_.nodes[s.anchor];
  auto node_op = NodeOpSpec(graph_, anchor);
  if (!node_op.ok()) return false;
  std::vector<PostOp> post_ops;
  auto step = std::make_unique<Step>();
  step->inputs = node_op->input_values;
  NodeBinding b;
  b.node = s.anchor;
  b.name = anchor.name;
  b.op_type = anchor.op_type;
  for (int k = 0; k < fused; ++k) {
    const EpilogueStep& e = s.steps[k];
    PostOp op{e.op_type, e.alpha, e.beta, e.operand >= 0, e.operand >= 0 ? graph_.values[e.operand].shape : std::vector<int64_t>{}};
    post_ops.push_back(op);
    if (e.operand >= 0) step->inputs.push_back(e.operand);
    b.op_type += "+" + e.op_type;
  }
  for (int k = 0; k < s.NodesOf(fused); ++k) b.fused_nodes.push_back(graph_.nodes[s.chain[k]].name);
  const bool halide = choice.impl == "halide";
  auto kernel = halide ? HalideFusedGemmKernel(node_op->op, choice.anchor, post_ops) : OneDnnFusedKernel(node_op->op, post_ops);
  if (!kernel.ok()) return false;
  // Only on the direct path (weights constant): oneDNN lacking this fusion shows at bind time.
  if (!BindKernel(step.get(), std::move(kernel.value())).ok() || step->kind != Step::Kind::kDirect) return false;
  step->in_place_input = step->kernel->InPlaceInput();
  step->output = s.OutputAfter(graph_, fused);
  b.shape = ShapeText(graph_.values[step->output].shape);
  b.template_id = kFusedTemplateId;
  b.policy = PolicyText(FusedPolicy{fused, choice.impl, choice.anchor}.Knobs());
  b.policy_source = choice.source;
  b.op = std::move(node_op.value());
  steps_.push_back(std::move(step));
  bindings_.push_back(std::move(b));
  pointwise_.push_back(false);
  return true;
}

Status Executor::BindKernel(Step* step, std::unique_ptr<Kernel> kernel) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const Tensor*> constants;
  step->constants.resize(step->inputs.size());
  for (size_t i = 0; i < step->inputs.size(); ++i) {
    const int v = step->inputs[i];
    shapes.push_back(graph_.values[v].shape);
    if (graph_.IsConstant(v)) step->constants[i] = graph_.values[v].constant->AsTensor();
    constants.push_back(graph_.IsConstant(v) ? &step->constants[i] : nullptr);
  }
  auto direct = kernel->BindDirect(shapes, constants);
  if (!direct.ok()) return direct.status();
  step->kind = *direct ? Step::Kind::kDirect : Step::Kind::kCopying;
  if (*direct) step->constants.clear();  // the kernel holds them in its own layout now
  step->kernel = std::move(kernel);
  return Status::Ok();
}

Status Executor::BindTemplate(Step* step, const NodeOp& node_op, const OpTemplate& t, const Policy& policy) {
  auto kernel = t.Build(node_op.op, policy);
  if (!kernel.ok()) return kernel.status();
  step->inputs = node_op.input_values;
  return BindKernel(step, std::move(kernel.value()));
}

Status Executor::BindNode(size_t index, const PolicyLookup& lookup, const std::set<int>& read_values,
                          std::map<std::string, std::vector<std::string>>* missing) {
  const Node& n = graph_.nodes[index];
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (n.outputs[k] >= 0 && (read_values.count(n.outputs[k]) || std::count(graph_.outputs.begin(), graph_.outputs.end(), n.outputs[k])))
      return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + "): output " + std::to_string(k) +
                                  " is used, and the executor computes only the first output of a node");
  auto step = std::make_unique<Step>();
  NodeBinding b;
  b.node = static_cast<int>(index);
  b.name = n.name;
  b.op_type = n.op_type;
  step->output = n.outputs.empty() ? -1 : n.outputs[0];
  b.shape = step->output >= 0 ? ShapeText(graph_.values[step->output].shape) : "";
  const bool runtime_input = !n.inputs.empty() && n.inputs[0] >= 0 && !graph_.IsConstant(n.inputs[0]);
  if (IsAliasOp(n.op_type) && runtime_input) {
    step->kind = Step::Kind::kAlias;
    step->inputs = {n.inputs[0]};
    b.policy_source = "alias";
  } else if (auto node_op = NodeOpSpec(graph_, n); Implements(n.op_type) && (!node_op.ok() || !TemplatesFor(node_op->op).ok()) &&
                                                   std::find(BasicOpTypes().begin(), BasicOpTypes().end(), n.op_type) == BasicOpTypes().end()) {
    // A tuned op type in a form its templates do not run (3-D pooling, int64 operands, ...).
    const Status why = node_op.ok() ? TemplatesFor(node_op->op).status() : node_op.status();
    return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + ") cannot run: " + why.message());
  } else if (node_op.ok() && Implements(node_op->op.op_type) && TemplatesFor(node_op->op).ok()) {
    const OpSpec& op = node_op->op;
    auto templates = TemplatesFor(op);
    const OpTemplate* t = templates->primary;
    Policy policy = t->DefaultPolicy(op);
    b.policy_source = "default";
    if (lookup) {
      if (auto entry = lookup(op); entry)
        if (const OpTemplate* stored = TemplateById(entry->template_id); stored && stored->Supports(op).ok()) {
          t = stored;
          policy = entry->policy;
          b.policy_source = "bank";
        }
    }
    TB_RETURN_IF_ERROR(BindTemplate(step.get(), *node_op, *t, policy).WithContext("node '" + n.name + "' (" + n.op_type + ", " + t->id() + ")"));
    // A Format policy whose layout this executor converts to and from on every run (its
    // neighbours keep row-major) may lose here what it won alone: against oneDNN, timed now.
    // Only the bank's: a default policy stays the template's default.
    if (b.policy_source == "bank" && step->kernel->ConvertsActivations() && t != &OneDnnImpl() && OneDnnImpl().Supports(op).ok()) {
      auto alternative = std::make_unique<Step>();
      alternative->output = step->output;
      const Policy library = OneDnnImpl().DefaultPolicy(op);
      if (BindTemplate(alternative.get(), *node_op, OneDnnImpl(), library).ok() && TimeStepAlone(*alternative) < TimeStepAlone(*step)) {
        step = std::move(alternative);
        t = &OneDnnImpl();
        policy = library;
        b.policy_source = "converts";  // the bank's policy converted layouts per run and was slower
      }
    }
    b.template_id = t->id();
    b.policy = PolicyText(policy);
    b.op = std::move(node_op.value());
  } else {
    auto basic = MakeBasicKernel(graph_, n);
    if (!basic.ok()) {
      if (std::find(BasicOpTypes().begin(), BasicOpTypes().end(), n.op_type) != BasicOpTypes().end() || Implements(n.op_type))
        return basic.status();  // a known op used in a way no kernel supports
      (*missing)[n.op_type].push_back(n.name);
      return Status::Ok();
    }
    step->kind = Step::Kind::kBasic;
    step->basic = std::move(basic.value());
    for (int v : n.inputs) step->inputs.push_back(v);
    b.policy_source = "basic";
  }
  // Each output element depends only on the same element of its inputs (broadcast ones aside).
  const bool pointwise = IsUnaryElementwiseOp(n.op_type) || IsBinaryElementwiseOp(n.op_type) ||
                         (step->kind == Step::Kind::kBasic && (n.op_type == "Clip" || n.op_type == "Sqrt" || n.op_type == "Neg" ||
                                                                n.op_type == "Exp" || n.op_type == "Pow"));
  pointwise_.push_back(pointwise && (step->kind == Step::Kind::kDirect || step->kind == Step::Kind::kBasic));
  steps_.push_back(std::move(step));
  bindings_.push_back(std::move(b));
  return Status::Ok();
}

Status Executor::Bind(const PolicyLookup& lookup, const FusionLookup& fusion) {
  std::map<std::string, std::vector<std::string>> missing;  // op type -> node names
  std::set<int> read_values;
  for (const Node& n : graph_.nodes) read_values.insert(n.inputs.begin(), n.inputs.end());
  // SGAT: a fused subgraph runs where its last fused chain node is, when every operand it reads
  // has been computed; its anchor and the chain nodes before that one wait for it.
  std::vector<Subgraph> subgraphs = fusion ? PartitionSubgraphs(graph_) : std::vector<Subgraph>{};
  std::map<int, std::pair<const Subgraph*, FusionChoice>> fused_at;  // last fused chain node -> choice
  std::set<int> deferred;
  for (const Subgraph& s : subgraphs)
    if (auto choice = fusion(s); choice && choice->fused > 0 && choice->fused <= static_cast<int>(s.steps.size())) {
      const int nodes = s.NodesOf(choice->fused);
      fused_at[s.chain[nodes - 1]] = {&s, *choice};
      deferred.insert(s.anchor);
      deferred.insert(s.chain.begin(), s.chain.begin() + nodes - 1);
    }
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    if (deferred.count(static_cast<int>(index))) continue;
    auto it = fused_at.find(static_cast<int>(index));
    if (it == fused_at.end()) {
      TB_RETURN_IF_ERROR(BindNode(index, lookup, read_values, &missing));
      continue;
    }
    const auto& [s, choice] = it->second;
    auto bound = BindFused(*s, choice);
    if (!bound.ok()) return bound.status();
    if (*bound) continue;
    // oneDNN cannot run it fused: the nodes one by one, here (still in dependency order).
    TB_RETURN_IF_ERROR(BindNode(s->anchor, lookup, read_values, &missing));
    for (int k = 0; k < s->NodesOf(choice.fused); ++k) TB_RETURN_IF_ERROR(BindNode(s->chain[k], lookup, read_values, &missing));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& [type, names] : missing) {
      list += (list.empty() ? "" : "; ") + type + " (";
      for (size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
      if (names.size() > 5) list += ", and " + std::to_string(names.size() - 5) + " more";
      list += ")";
    }
    return Status::InvalidInput("the executor has no kernel for " + std::to_string(missing.size()) + " op type(s) of this model: " + list);
  }
  return Status::Ok();
}

bool HandOverNativeLayouts() {
  const char* env = std::getenv("TILEBANK_MODEL_LAYOUTS");
  return !env || std::string(env) != "row-major";
}

Status Executor::HandOverLayouts() {
  const size_t values = graph_.values.size();
  layout_of_.assign(values, HandoverLayout{});
  if (!HandOverNativeLayouts()) return Status::Ok();
  // An elementwise step whose run-time inputs all have its output's shape (or one element) computes
  // the same in any layout of them: its inputs and output form one group that takes one layout.
  auto agnostic = [&](size_t i) {
    const Step& s = *steps_[i];
    if (!pointwise_[i] || s.output < 0) return false;
    bool same_shape_input = false;
    for (int v : s.inputs) {
      if (v < 0) continue;
      const bool same = graph_.values[v].shape == graph_.values[s.output].shape && !graph_.IsConstant(v);
      if (!same && Tensor::NumElements(graph_.values[v].shape) != 1) return false;
      same_shape_input |= same;
    }
    return same_shape_input;
  };
  std::vector<int> group(values);
  for (size_t v = 0; v < values; ++v) group[v] = static_cast<int>(v);
  std::function<int(int)> find = [&](int v) { return group[v] == v ? v : group[v] = find(group[v]); };
  std::vector<bool> is_agnostic(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    is_agnostic[i] = agnostic(i);
    if (is_agnostic[i])
      for (int v : steps_[i]->inputs)
        if (v >= 0 && graph_.values[v].shape == graph_.values[steps_[i]->output].shape) group[find(v)] = find(steps_[i]->output);
  }
  // Per group: the layout its producers write natively, and whether every reader takes it.
  struct GroupLayout {
    HandoverLayout layout;
    bool possible = true, has_agnostic = false;
    int64_t elements = 0;
  };
  std::map<int, GroupLayout> groups;
  auto refuse = [&](int v) { groups[find(v)].possible = false; };
  for (int v : graph_.inputs) refuse(v);
  for (int v : graph_.outputs) refuse(v);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    if (s.output < 0) continue;
    GroupLayout& g = groups[find(s.output)];
    g.elements = Tensor::NumElements(graph_.values[s.output].shape);
    if (is_agnostic[i]) {
      g.has_agnostic = true;
      continue;
    }
    const HandoverLayout native = s.kind == Step::Kind::kDirect ? s.kernel->NativeLayout(-1) : HandoverLayout{};
    if (native.row_major() || (!g.layout.row_major() && g.layout.key != native.key)) g.possible = false;
    else g.layout = native;
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    if (is_agnostic[i]) continue;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const int v = s.inputs[k];
      if (v < 0 || graph_.IsConstant(v)) continue;
      GroupLayout& g = groups[find(v)];
      if (s.kind != Step::Kind::kDirect || s.kernel->NativeLayout(static_cast<int>(k)).key != g.layout.key) g.possible = false;
    }
  }
  // Elementwise steps see every float of the buffer: no padding.
  for (auto& [root, g] : groups)
    if (g.layout.row_major() || (g.has_agnostic && g.layout.floats != g.elements)) g.possible = false;
  for (size_t v = 0; v < values; ++v)
    if (auto it = groups.find(find(static_cast<int>(v))); it != groups.end() && it->second.possible && !graph_.IsConstant(static_cast<int>(v)))
      layout_of_[v] = it->second.layout;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = *steps_[i];
    if (s.output >= 0) bindings_[i].layout = layout_of_[s.output].name;
    if (is_agnostic[i] || s.kind != Step::Kind::kDirect) continue;
    std::vector<bool> handed_inputs(s.inputs.size(), false);
    bool any = false;
    for (size_t k = 0; k < s.inputs.size(); ++k) any |= handed_inputs[k] = s.inputs[k] >= 0 && !layout_of_[s.inputs[k]].row_major();
    const bool handed_output = s.output >= 0 && !layout_of_[s.output].row_major();
    if (any || handed_output)
      TB_RETURN_IF_ERROR(s.kernel->UseNativeLayouts(handed_inputs, handed_output).WithContext("node '" + bindings_[i].name + "'"));
  }
  return Status::Ok();
}

void Executor::PlanMemory() {
  const int values = static_cast<int>(graph_.values.size());
  storage_of_.assign(values, -1);
  std::vector<int64_t> size, first, last;
  auto new_storage = [&](int v, int64_t when) {
    storage_of_[v] = static_cast<int>(size.size());
    const int64_t floats = std::max(Tensor::NumElements(graph_.values[v].shape), layout_of_[v].floats);
    size.push_back((floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats);
    first.push_back(when);
    last.push_back(when);
  };
  // The last step that reads each value's memory (reshapes share it), for writing in place.
  const int64_t end = static_cast<int64_t>(steps_.size());
  std::vector<int> group(values);
  for (int v = 0; v < values; ++v) group[v] = v;
  for (const auto& s : steps_)
    if (s->kind == Step::Kind::kAlias && s->output >= 0) group[s->output] = group[s->inputs[0]];
  std::vector<int64_t> group_last(values, -1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int v : steps_[i]->inputs)
      if (v >= 0) group_last[group[v]] = std::max<int64_t>(group_last[group[v]], i);
  for (int v : graph_.outputs) group_last[group[v]] = end;
  for (int v : graph_.inputs) new_storage(v, -1);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = *steps_[i];
    for (int v : s.inputs)
      if (v >= 0 && storage_of_[v] >= 0) last[storage_of_[v]] = std::max<int64_t>(last[storage_of_[v]], i);
    if (s.output < 0) continue;
    if (s.kind == Step::Kind::kAlias) {
      storage_of_[s.output] = storage_of_[s.inputs[0]];
      continue;
    }
    // A pointwise op writes over an input of its shape that nothing reads afterwards: the lines it
    // reads are the lines it writes, and no new memory is touched.
    // Only the first operand: libraries support in-place computation over it (oneDNN's src0).
    // A kernel may name another input it reads whole before writing (a fused residual).
    int in_place = -1;
    const int first = pointwise_[i] && !s.inputs.empty() ? s.inputs[0]
                      : s.in_place_input >= 0 && s.in_place_input < static_cast<int>(s.inputs.size()) ? s.inputs[s.in_place_input] : -1;
    // A kernel's named input must be the only one in that memory: the anchor of a fused step reads
    // its other inputs while it writes (Conv(x) + x).
    bool shared = false;
    if (!pointwise_[i] && first >= 0)
      for (size_t k = 0; k < s.inputs.size(); ++k)
        shared |= static_cast<int>(k) != s.in_place_input && s.inputs[k] >= 0 && storage_of_[s.inputs[k]] >= 0 &&
                  storage_of_[s.inputs[k]] == storage_of_[first];
    if (first >= 0 && !shared && storage_of_[first] >= 0 && group_last[group[first]] == static_cast<int64_t>(i) &&
        graph_.values[first].shape == graph_.values[s.output].shape && layout_of_[first].key == layout_of_[s.output].key)
      in_place = first;
    if (in_place >= 0) storage_of_[s.output] = storage_of_[in_place];
    else new_storage(s.output, static_cast<int64_t>(i));
  }
  for (int v : graph_.outputs)
    if (storage_of_[v] >= 0) last[storage_of_[v]] = static_cast<int64_t>(steps_.size());
  // Largest first, each at the lowest offset free over its lifetime.
  std::vector<int> order(size.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return size[a] != size[b] ? size[a] > size[b] : a < b; });
  storage_offset_.assign(size.size(), 0);
  std::vector<int> placed;
  arena_floats_ = 0;
  for (int s : order) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int p : placed)
      if (first[p] <= last[s] && first[s] <= last[p]) busy.push_back({storage_offset_[p], storage_offset_[p] + size[p]});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + size[s] <= lo) break;
      offset = std::max(offset, hi);
    }
    storage_offset_[s] = offset;
    arena_floats_ = std::max(arena_floats_, offset + size[s]);
    placed.push_back(s);
  }
}

float* Executor::Address(int value) {
  if (value < 0) return nullptr;
  if (storage_of_[value] < 0) return constant_data_[value].empty() ? nullptr : constant_data_[value].data();
  return arena_.get() + storage_offset_[storage_of_[value]];
}

Status Executor::RunStep(Step& s, const std::vector<const float*>& in, float* out) {
  switch (s.kind) {
    case Step::Kind::kAlias: break;
    case Step::Kind::kBasic: s.basic(in, out); break;
    case Step::Kind::kDirect: return s.kernel->RunDirect(in, out);
    case Step::Kind::kCopying: {
      std::vector<Tensor> copies(s.inputs.size());
      std::vector<const Tensor*> args;
      for (size_t k = 0; k < s.inputs.size(); ++k) {
        if (!s.constants[k].data.empty()) {
          args.push_back(&s.constants[k]);
          continue;
        }
        copies[k] = Tensor(graph_.values[s.inputs[k]].shape);
        std::copy(in[k], in[k] + copies[k].size(), copies[k].data.begin());
        args.push_back(&copies[k]);
      }
      Tensor result;
      TB_RETURN_IF_ERROR(s.kernel->Prepare(args));
      TB_RETURN_IF_ERROR(s.kernel->Run());
      TB_RETURN_IF_ERROR(s.kernel->Fetch(&result));
      std::copy(result.data.begin(), result.data.end(), out);
      break;
    }
  }
  return Status::Ok();
}

double Executor::TimeStepAlone(Step& s) {
  std::vector<std::vector<float>> buffers;
  std::vector<const float*> in;
  for (int v : s.inputs) {
    if (s.kind == Step::Kind::kDirect && graph_.IsConstant(v)) {
      in.push_back(nullptr);
      continue;
    }
    buffers.emplace_back(static_cast<size_t>(Tensor::NumElements(graph_.values[v].shape)), 0.f);
    in.push_back(buffers.back().data());
  }
  std::vector<float> out(static_cast<size_t>(Tensor::NumElements(graph_.values[s.output].shape)));
  double fastest = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!RunStep(s, in, out.data()).ok()) return 1e30;
    if (i > 0) fastest = std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return fastest;
}

Status Executor::Run(const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs, std::vector<double>* node_us) {
  if (inputs.size() != graph_.inputs.size())
    return Status::InvalidInput("the model takes " + std::to_string(graph_.inputs.size()) + " inputs, not " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph_.values[graph_.inputs[i]];
    if (inputs[i]->shape != v.shape)
      return Status::InvalidInput("input '" + v.name + "' has shape " + ShapeText(inputs[i]->shape) + "; the model takes " + ShapeText(v.shape));
    std::copy(inputs[i]->data.begin(), inputs[i]->data.end(), Address(graph_.inputs[i]));
  }
  if (node_us) node_us->assign(steps_.size(), 0.0);
  std::vector<const float*> in;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = *steps_[i];
    const auto start = std::chrono::steady_clock::now();
    in.clear();
    for (int v : s.inputs) in.push_back(s.kind == Step::Kind::kDirect && graph_.IsConstant(v) ? nullptr : Address(v));
    float* out = Address(s.output);
    TB_RETURN_IF_ERROR(RunStep(s, in, out).WithContext("node '" + bindings_[i].name + "'"));
    if (node_us) (*node_us)[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  outputs->clear();
  for (int v : graph_.outputs) {
    Tensor t(graph_.values[v].shape);
    const float* data = Address(v);
    if (!data) return Status::InvalidInput("output '" + graph_.values[v].name + "' is not computed");
    std::copy(data, data + t.size(), t.data.begin());
    outputs->push_back(std::move(t));
  }
  return Status::Ok();
}

}  // namespace tilebank::engine::model
