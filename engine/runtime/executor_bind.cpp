#include "engine/catalog/template_registry.h"
#include "engine/backends/library_impls.h"
#include "engine/runtime/executor.h"

#include "engine/core/precision_mode.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "engine/backends/halide/builder.h"
#include "engine/backends/halide/halide_target.h"
#include "engine/runtime/executor_step.h"
#include "engine/catalog/op_list_check.h"
#include "engine/catalog/policy_check.h"
#include "engine/backends/onednn/attention_kernel.h"
#include "engine/backends/halide/halide_fused_gemm.h"
#include "engine/backends/onednn/onednn_post_ops.h"
#include "engine/kernels/kernel_registry.h"
#include "engine/core/op_semantics.h"
#include "engine/core/host_facts.h"
#include "engine/core/threads.h"
#include "engine/backends/op_template.h"
#include "engine/backends/halide/templates.h"

namespace tilebank::engine::model {

namespace {

// A node whose output is its input: a Pad whose pads are all zero (PyTorch puts one before an
// AveragePool), a Concat of one input (DenseNet's first layer of each block), an Expand to the
// input's own shape (torch.onnx writes one for every slice assignment, `out[:, 2:] = x[:, 2:]`).
bool PassesInputThrough(const Graph& g, const Node& n) {
  if ((n.op_type != "Pad" && n.op_type != "Concat" && n.op_type != "Expand") || n.outputs.empty() || n.outputs[0] < 0 || n.inputs.empty() || n.inputs[0] < 0)
    return false;
  if (g.values[n.outputs[0]].shape != g.values[n.inputs[0]].shape || !g.values[n.outputs[0]].shape_known) return false;
  if (n.op_type == "Expand") return g.values[n.inputs[0]].shape_known;
  if (n.op_type == "Concat") return n.inputs.size() == 1;
  if (n.inputs.size() < 2 || !g.IsConstant(n.inputs[1])) {  // opset < 11: the pads attribute
    const auto pads = g.AttrInts(n, "pads", {1});
    return std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
  }
  const auto& pads = *g.values[n.inputs[1]].constant;
  for (int64_t i = 0; i < pads.size(); ++i)
    if (pads.At(i) != 0) return false;
  return true;
}

// What a kernel built for the values `inputs` reads is known by, in KernelPrefetch: the values
// name the node (its weights), the rest what is built for it.
std::string ValuesText(const std::vector<int>& inputs) {
  std::string text;
  for (int v : inputs) text += std::to_string(v) + ",";
  return text;
}
std::string TemplateBuildKey(const OpTemplate& t, const Policy& policy, const std::vector<int>& inputs) {
  return std::string("template|") + t.id() + "|" + PolicyText(policy) + "|" + ValuesText(inputs);
}
std::string FusedBuildKey(size_t fused_steps, const Policy& anchor_policy, const std::vector<int>& inputs) {
  return "onednn fused|" + std::to_string(fused_steps) + "|" + PolicyText(anchor_policy) + "|" + ValuesText(inputs);
}

// The graph's shapes and constants of `inputs`, as a kernel's BindDirect reads them (`constants`
// holds the float copies the pointers point at).
void DirectOperands(const Graph& g, const std::vector<int>& inputs, std::vector<std::vector<int64_t>>* shapes, std::vector<Tensor>* constants,
                    std::vector<const Tensor*>* pointers) {
  constants->assign(inputs.size(), Tensor());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int v = inputs[i];
    shapes->push_back(g.values[v].shape);
    if (g.IsConstant(v)) (*constants)[i] = g.values[v].constant->AsTensor();
    pointers->push_back(g.IsConstant(v) ? &(*constants)[i] : nullptr);
  }
}

// The graph's constants among `inputs` as Tensors for a kernel's BindDirect, the float ones lent:
// their values moved out of the graph, and back when this ends, so that binding a layer does not
// copy its weights (that copy was FastSpeech's load peak: 9 MiB). Nothing else may read the graph
// meanwhile. Other constants are converted copies (ConstTensor::AsTensor).
class LentConstants {
 public:
  LentConstants(Graph* g, const std::vector<int>& inputs) : g_(g), inputs_(inputs), tensors_(inputs.size()), pointers_(inputs.size(), nullptr) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int v = inputs[i];
      shapes_.push_back(g->values[v].shape);
      if (!g->IsConstant(v)) continue;
      if (auto first = std::find(inputs.begin(), inputs.begin() + static_cast<long>(i), v); first != inputs.begin() + static_cast<long>(i)) {
        pointers_[i] = pointers_[first - inputs.begin()];  // read twice: lent once
        continue;
      }
      ConstTensor& c = *g->values[v].constant;
      if (c.type == ConstTensor::Type::kFloat && static_cast<int64_t>(c.floats.size()) == c.size() && c.size() > 0) {
        tensors_[i].shape = c.shape;
        tensors_[i].data = std::move(c.floats);
        lent_.push_back(i);
      } else {
        tensors_[i] = c.AsTensor();
      }
      pointers_[i] = &tensors_[i];
    }
  }
  ~LentConstants() {
    for (size_t i : lent_) g_->values[inputs_[i]].constant->floats = std::move(tensors_[i].data);
  }
  LentConstants(const LentConstants&) = delete;
  LentConstants& operator=(const LentConstants&) = delete;

  const std::vector<std::vector<int64_t>>& shapes() const { return shapes_; }
  const std::vector<const Tensor*>& tensors() const { return pointers_; }
  // Copies of the constants, one per input (empty for the others), as DirectOperands gives them.
  std::vector<Tensor> Copies() const {
    std::vector<Tensor> copies(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (pointers_[i]) copies[i] = *pointers_[i];
    return copies;
  }

 private:
  Graph* g_;
  std::vector<int> inputs_;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<Tensor> tensors_;
  std::vector<const Tensor*> pointers_;
  std::vector<size_t> lent_;
};

// `kernel` bound on the direct path to the graph's `inputs`; an error when it built or bound otherwise.
Result<std::unique_ptr<Kernel>> BoundDirect(const Graph& g, const std::vector<int>& inputs, Result<std::unique_ptr<Kernel>> kernel) {
  if (!kernel.ok()) return kernel.status();
  std::vector<std::vector<int64_t>> shapes;
  std::vector<Tensor> constants;
  std::vector<const Tensor*> pointers;
  DirectOperands(g, inputs, &shapes, &constants, &pointers);
  auto direct = (*kernel)->BindDirect(shapes, pointers);
  if (!direct.ok()) return direct.status();
  if (!*direct) return Status::InvalidInput("not on the direct path");
  return std::move(kernel.value());
}

// Whether an impl.onednn policy runs oneDNN's own convolution (or product), whose primitives are made
// to run on any thread (engine/backends/onednn/caller_scratchpad.h), not tilebank's Winograd or depthwise kernels.
bool OneDnnOwnAlgorithm(const Policy& policy) {
  const std::string algo = TextKnob(policy, "algo", "direct");
  return algo == "direct" || algo == "winograd";
}

// TILEBANK_PARALLEL_BIND: "on" builds kernels ahead on a second thread; "all" has it build every
// kernel it was given, the binder waiting for each (for tests: no race decides); unset or "off"
// binds on one thread. Off by default: on 2 cores it saved 5-25 ms of a 50-75 ms bind (tcn,
// yolo_detector) and cost up to 45 MiB of peak memory (ResNet-50: the second thread's heap keeps
// what it freed), where oneDNN's weight reorders already run on both cores (docs/PERFORMANCE.md).
std::string ParallelBindMode() {
  const char* env = std::getenv("TILEBANK_PARALLEL_BIND");
  return env ? env : "";
}
bool PrefetchKernels() { return (ParallelBindMode() == "on" || ParallelBindMode() == "all") && LibraryThreadsHere() > 1; }

}  // namespace

Policy Executor::FusedAnchorPolicy(const OpSpec& op, const PolicyLookup& lookup, std::string* source) const {
  const PolicyChoice choice = ChoosePolicy(op, lookup);
  if (choice.tmpl != &OneDnnImpl() || choice.source == "builtin") return {};
  if (source) *source = choice.source;
  return choice.policy;
}

void Executor::PlanPrefetch(KernelPrefetch* prefetch, const std::map<int, std::pair<const Subgraph*, FusionChoice>>& fused_at,
                            const std::set<int>& deferred, const PolicyLookup& lookup) {
  // The op types of the two kernels that make their primitives with the caller's scratchpad.
  static const std::set<std::string> kCubeOps = {"Conv", "Gemm", "MatMul"};
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    if (deferred.count(static_cast<int>(index))) continue;
    if (auto it = fused_at.find(static_cast<int>(index)); it != fused_at.end()) {
      const auto& [s, choice] = it->second;
      if (s->attention || choice.policy.impl == "halide") continue;
      auto node_op = NodeOpSpec(graph_, graph_.nodes[s->anchor]);
      if (!node_op.ok()) continue;
      std::vector<ChainStep> steps;
      std::vector<int> inputs = node_op->input_values;
      for (int k = 0; k < choice.policy.fuse; ++k) {
        steps.push_back(s->steps[k].step);
        if (s->steps[k].operand >= 0) inputs.push_back(s->steps[k].operand);
      }
      std::vector<int> nodes(s->chain.begin(), s->chain.begin() + s->NodesOf(choice.policy.fuse));
      nodes.push_back(s->anchor);
      const Policy anchor_policy = FusedAnchorPolicy(node_op->op, lookup);
      if (!OneDnnOwnAlgorithm(anchor_policy.empty() ? OneDnnImpl().DefaultPolicy(node_op->op) : anchor_policy)) continue;
      prefetch->Add(FusedBuildKey(steps.size(), anchor_policy, inputs), nodes,
                    [this, op = node_op->op, steps, anchor_policy, inputs] { return BoundDirect(graph_, inputs, OneDnnFusedKernel(op, steps, anchor_policy)); });
      continue;
    }
    const Node& n = graph_.nodes[index];
    if (!kCubeOps.count(n.op_type) || n.inputs.empty() || n.inputs[0] < 0 || graph_.IsConstant(n.inputs[0])) continue;
    auto node_op = NodeOpSpec(graph_, n);
    if (!node_op.ok() || !TemplatesFor(node_op->op).ok()) continue;
    const PolicyChoice choice = ChoosePolicy(node_op->op, lookup);
    if (choice.tmpl != &OneDnnImpl() || !OneDnnOwnAlgorithm(choice.policy)) continue;
    prefetch->Add(TemplateBuildKey(*choice.tmpl, choice.policy, node_op->input_values), {static_cast<int>(index)},
                  [this, op = node_op->op, policy = choice.policy, inputs = node_op->input_values] {
                    return BoundDirect(graph_, inputs, OneDnnImpl().Build(op, policy));
                  });
  }
}

Result<bool> Executor::BindFused(const Subgraph& s, const FusionChoice& choice, const PolicyLookup& lookup) {
  const int fused = choice.policy.fuse;
  const Node& anchor = graph_.nodes[s.anchor];
  auto node_op = NodeOpSpec(graph_, anchor);
  if (!node_op.ok()) return false;
  auto step = std::make_unique<Step>();
  NodeBinding b;
  b.node = s.anchor;
  b.name = anchor.name;
  Result<std::unique_ptr<Kernel>> kernel = Status::InvalidInput("no fused kernel");
  std::string anchor_text;  // the anchor's policy where the bank's, not oneDNN's first choice
  Policy anchor_policy;     // the bank's impl.onednn policy for the anchor, when it has one
  bool bound_ahead = false;  // `kernel` came bound from prefetch_
  if (s.attention) {  // one kernel reading Q, K, V (and the mask) where the nodes before the block wrote them
    if (choice.policy.impl != "attention") return false;
    step->inputs = s.attention->inputs;
    b.op_type = "Attention";
    kernel = AttentionKernel(s.attention->geometry, choice.policy.anchor);
  } else {  // the anchor with its first `fused` chain steps, their operands after its inputs
    std::vector<ChainStep> steps;
    step->inputs = node_op->input_values;
    b.op_type = anchor.op_type;
    for (int k = 0; k < fused; ++k) {
      const EpilogueStep& e = s.steps[k];
      steps.push_back(e.step);
      if (e.operand >= 0) step->inputs.push_back(e.operand);
      b.op_type += "+" + e.step.op_type;
    }
    if (choice.policy.impl == "halide") {
      kernel = HalideFusedGemmKernel(node_op->op, choice.policy.anchor, steps);
    } else {
      std::string anchor_source;
      anchor_policy = FusedAnchorPolicy(node_op->op, lookup, &anchor_source);
      if (auto ahead = prefetch_ ? prefetch_->Take(FusedBuildKey(steps.size(), anchor_policy, step->inputs)) : nullptr) {
        kernel = std::move(ahead);
        bound_ahead = true;
      } else {
        kernel = OneDnnFusedKernel(node_op->op, steps, anchor_policy);
        if (!kernel.ok() && !anchor_policy.empty()) {  // oneDNN offers that implementation unfused only
          anchor_policy.clear();
          kernel = OneDnnFusedKernel(node_op->op, steps);
        }
      }
      if (!anchor_policy.empty()) anchor_text = "; anchor " + anchor_source + ": " + PolicyText(anchor_policy);
      b.precision = PolicyPrecision(anchor_policy);
      step->onednn_chain = steps;
    }
  }
  if (!kernel.ok()) return false;
  for (int k = 0; k < s.NodesOf(fused); ++k) b.fused_nodes.push_back(graph_.nodes[s.chain[k]].name);
  // Only on the direct path (weights constant): oneDNN lacking this fusion shows at bind time. An
  // anchor policy that binds only where its operands are constants (a bf16 product's B) gives way
  // to oneDNN's first choice, as one oneDNN cannot fuse does above.
  bool bound = bound_ahead ? AdoptDirect(step.get(), std::move(kernel.value())), true : BindKernel(step.get(), std::move(kernel.value())).ok();
  if (!bound && !anchor_policy.empty()) {
    auto plain = OneDnnFusedKernel(node_op->op, *step->onednn_chain);
    bound = plain.ok() && BindKernel(step.get(), std::move(plain.value())).ok();
    anchor_text.clear();
    b.precision = "fp32";
  }
  if (!bound || step->kind != Step::Kind::kDirect) return false;
  step->in_place_input = step->kernel->InPlaceInput();
  step->output = s.OutputAfter(graph_, fused);
  b.shape = ShapeText(graph_.values[step->output].shape);
  b.template_id = kFusedTemplateId;
  b.policy = PolicyText(choice.policy.Knobs()) + anchor_text;
  b.policy_source = choice.source;
  b.op = std::move(node_op.value());
  steps_.push_back(std::move(step));
  bindings_.push_back(std::move(b));
  pointwise_.push_back(false);
  return true;
}

void Executor::AdoptDirect(Step* step, std::unique_ptr<Kernel> kernel) {
  step->kind = Step::Kind::kDirect;
  step->constants.clear();
  step->kernel = std::move(kernel);
}

Status Executor::BindKernel(Step* step, std::unique_ptr<Kernel> kernel) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const Tensor*> constants;
  Result<bool> direct = false;
  if (prefetch_) {  // a job on the other thread may read the same constants: copied
    DirectOperands(graph_, step->inputs, &shapes, &step->constants, &constants);
    direct = kernel->BindDirect(shapes, constants);
  } else {
    LentConstants lent(&graph_, step->inputs);
    direct = kernel->BindDirect(lent.shapes(), lent.tensors());
    if (direct.ok() && !*direct) step->constants = lent.Copies();  // the copying path reads its own
  }
  if (!direct.ok()) return direct.status();
  step->kind = *direct ? Step::Kind::kDirect : Step::Kind::kCopying;
  if (*direct) step->constants.clear();  // the kernel holds them in its own layout now
  step->kernel = std::move(kernel);
  return Status::Ok();
}

Status Executor::BindTemplate(Step* step, const NodeOp& node_op, const OpTemplate& t, const Policy& policy) {
  step->inputs = node_op.input_values;
  if (auto ahead = prefetch_ ? prefetch_->Take(TemplateBuildKey(t, policy, node_op.input_values)) : nullptr) {
    AdoptDirect(step, std::move(ahead));
    return Status::Ok();
  }
  auto kernel = t.Build(node_op.op, policy);
  if (!kernel.ok()) return kernel.status();
  return BindKernel(step, std::move(kernel.value()));
}

Executor::PolicyChoice Executor::ChoosePolicy(const OpSpec& op, const PolicyLookup& lookup) const {
  PolicyChoice choice;
  if (auto found = lookup ? lookup(op) : std::nullopt; found) {
    const std::string from = found->nearest ? "the nearest entry's policy" : "the bank's policy";
    const OpTemplate* stored = TemplateById(found->entry.template_id);
    // Judged against this host's target: a bank's policies were judged against its soc_version's.
    std::string problem = !stored ? "template " + found->entry.template_id + " is unknown to this build" : PolicyProblemAt(*stored, op, found->entry.policy);
    if (problem.empty()) {
      choice.tmpl = stored;
      choice.policy = found->entry.policy;
      choice.source = found->nearest ? "nearest" : "bank";
      return choice;
    }
    // Another shape's policy that does not fit this one is no news; the bank's own entry is.
    if (!found->nearest) choice.note = from + " cannot run on this host's target (" + HostHalideTarget().to_string() + "): " + problem;
  }
  const BuiltinChoice builtin = BuiltinChoiceFor(op, default_policies_);
  choice.tmpl = builtin.tmpl;
  choice.policy = builtin.policy;
  choice.source = "builtin";
  return choice;
}

std::optional<FusionChoice> Executor::BuiltinFusion(const Subgraph& s, const PolicyLookup& lookup) const {
  if (default_policies_ == DefaultPolicies::kTemplate) return std::nullopt;
  if (s.attention) return FusionChoice{FusedPolicy{1, "attention", DefaultAttentionPolicy(s.attention->geometry)}, "builtin"};
  auto node_op = NodeOpSpec(graph_, graph_.nodes[s.anchor]);
  if (!node_op.ok() || !TemplatesFor(node_op->op).ok()) return std::nullopt;
  if (ChoosePolicy(node_op->op, lookup).tmpl != &OneDnnImpl()) return std::nullopt;
  // A convolution's first Add of a whole output-sized operand runs as oneDNN's sum; a second such
  // Add would be a full-tensor binary post-op, which takes the convolution to a kernel many times
  // slower (RepVGG's three-branch sum, 3x3 of 96 channels at 28x28: 5.5 ms fused against 0.5) and
  // must be read row-major: the chain stops before it, leaving an elementwise Add that runs in any
  // layout. (Products run such operands at full speed: SwiGLU's Mul stays fused.) Where oneDNN's
  // convolution would start its sums from the residual (below AVX-512, OneDnnConvAddsResidualOnce),
  // the chain stops before the first such Add.
  const Node& anchor = graph_.nodes[s.anchor];
  const std::vector<int64_t>& whole = graph_.values[anchor.outputs[0]].shape;
  int fused = 0;
  bool sum_taken = false;
  for (; fused < static_cast<int>(s.steps.size()) && IsOneDnnPostOp(s.steps[fused].step.op_type); ++fused) {
    const ChainStep& step = s.steps[fused].step;
    if (anchor.op_type != "Conv" || !IsSumCandidate(step, whole)) continue;
    if (sum_taken || !OneDnnConvAddsResidualOnce(node_op->op)) break;
    sum_taken = true;
  }
  if (fused == 0) return std::nullopt;
  return FusionChoice{OneDnnFusion(fused), "builtin"};
}

Status Executor::BindRegistry(const Node& n, NodeBinding* b, Step* step, const std::string& onednn_impl) {
  kernels::KernelInfo info = StaticKernelInfoOf(graph_, n);
  if (!onednn_impl.empty()) {
    nlohmann::json attrs = n.attrs;
    attrs["onednn_impl"] = onednn_impl;
    info.attrs = kernels::Attrs(attrs);
  }
  std::string implementation;
  auto op = kernels::KernelRegistry::Default().Create(info, &implementation);
  if (!op.ok()) return op.status();
  step->op = std::move(op.value());
  step->inputs = n.inputs;
  b->policy_source = implementation;  // "reference", "float32", "onednn", ...
  if ((step->arena = step->op->Arena())) {  // float32 in the arena: nothing copied
    step->kind = Step::Kind::kArena;
    return Status::Ok();
  }
  step->kind = Step::Kind::kRegistry;
  step->outputs = n.outputs;
  return Status::Ok();
}

Executor::NodeFacts Executor::FactsOf(const Node& n, const std::set<int>& read_values) const {
  NodeFacts f;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    f.typed |= n.outputs[k] >= 0 && (read_values.count(n.outputs[k]) || std::count(graph_.outputs.begin(), graph_.outputs.end(), n.outputs[k]));
  for (int v : n.inputs) f.typed |= v >= 0 && !graph_.IsConstant(v) && (graph_.values[v].dtype != "float32" || !graph_.values[v].shape_known);
  for (int v : n.outputs) f.typed |= v >= 0 && (graph_.values[v].dtype != "float32" || !graph_.values[v].shape_known);
  // Every input constant (a Conv of a folded value, which constant folding does not evaluate): the
  // tuned kernels read constants as prepacked weights only, so the registry's kernel computes it.
  bool all_constant = !n.inputs.empty();
  for (int v : n.inputs) all_constant &= v < 0 || graph_.IsConstant(v);
  f.typed |= all_constant && kernels::KernelRegistry::Default().Has(n.op_type);
  f.runtime_input = !n.inputs.empty() && n.inputs[0] >= 0 && !graph_.IsConstant(n.inputs[0]);
  return f;
}

Result<bool> Executor::ClaimAlias(const Node& n, const NodeFacts& facts, const PolicyLookup&, Step* step, NodeBinding* b) {
  if (facts.typed || !facts.runtime_input || !(IsAliasOp(n.op_type) || PassesInputThrough(graph_, n))) return false;
  step->kind = Step::Kind::kAlias;
  step->inputs = {n.inputs[0]};
  b->policy_source = "alias";
  return true;
}

Result<bool> Executor::ClaimTuned(const Node& n, const NodeFacts& facts, const PolicyLookup& lookup, Step* step, NodeBinding* b) {
  if (facts.typed) {
    // The int8 ops run the oneDNN implementation the bank holds for them (the int8.onednn template,
    // the only one for their op types), else oneDNN's first choice, on the registry's kernel.
    if (!IsQuantizedTunedOp(n.op_type) || !kernels::KernelRegistry::Default().Has(n.op_type)) return false;
    auto node_op = NodeOpSpec(graph_, n);
    if (!node_op.ok() || !TemplatesFor(node_op->op).ok()) return false;
    const PolicyChoice choice = ChoosePolicy(node_op->op, lookup);
    TB_RETURN_IF_ERROR(BindRegistry(n, b, step, TextKnob(choice.policy, "impl", "")));
    b->template_id = choice.tmpl->id();
    b->policy = PolicyText(choice.policy);
    b->policy_source = choice.source;
    b->policy_note = choice.note;
    b->op = std::move(node_op.value());
    return true;
  }
  auto node_op = NodeOpSpec(graph_, n);
  if (!node_op.ok() || !Implements(node_op->op.op_type) || !TemplatesFor(node_op->op).ok()) {
    // A tuned op type in a form its templates do not run (3-D pooling, int64 operands, ...) is the
    // registry's; without a registry kernel it cannot run.
    if (Implements(n.op_type) && !kernels::KernelRegistry::Default().Has(n.op_type)) {
      const Status why = node_op.ok() ? TemplatesFor(node_op->op).status() : node_op.status();
      return Status::InvalidInput("node '" + n.name + "' (" + n.op_type + ") cannot run: " + why.message());
    }
    return false;
  }
  const OpSpec& op = node_op->op;
  PolicyChoice choice = ChoosePolicy(op, lookup);
  Status bound = BindTemplate(step, *node_op, *choice.tmpl, choice.policy);
  if (!bound.ok() && choice.source != "builtin") {  // a stored policy that does not build here
    const std::string note = choice.source == "bank" ? "the bank's policy does not build here: " + bound.message() : "";
    choice = ChoosePolicy(op, nullptr);
    choice.note = note;
    bound = BindTemplate(step, *node_op, *choice.tmpl, choice.policy);
  }
  const OpTemplate* t = choice.tmpl;
  Policy policy = choice.policy;
  b->policy_source = choice.source;
  b->policy_note = choice.note;
  TB_RETURN_IF_ERROR(bound.WithContext("node '" + n.name + "' (" + n.op_type + ", " + t->id() + ")"));
  // A Format policy whose layout this executor converts to and from on every run (its
  // neighbours keep row-major) may lose here what it won alone: against oneDNN, timed now.
  // Only the bank's (or the nearest entry's): a built-in choice stays as chosen.
  if ((b->policy_source == "bank" || b->policy_source == "nearest") && step->kernel->ConvertsActivations() && t != &OneDnnImpl() &&
      OneDnnImpl().Supports(op).ok()) {
    Step alternative;
    alternative.output = step->output;
    const Policy library = OneDnnImpl().DefaultPolicy(op);
    if (BindTemplate(&alternative, *node_op, OneDnnImpl(), library).ok() && TimeStepAlone(alternative) < TimeStepAlone(*step)) {
      *step = std::move(alternative);
      t = &OneDnnImpl();
      policy = library;
      b->policy_source = "converts";  // the bank's policy converted layouts per run and was slower
    }
  }
  b->template_id = t->id();
  b->policy = PolicyText(policy);
  b->precision = PolicyPrecision(policy);
  b->op = std::move(node_op.value());
  return true;
}

Result<bool> Executor::ClaimRegistry(const Node& n, const NodeFacts&, const PolicyLookup&, Step* step, NodeBinding* b) {
  if (!kernels::KernelRegistry::Default().Has(n.op_type)) return false;
  TB_RETURN_IF_ERROR(BindRegistry(n, b, step));
  return true;
}

Status Executor::BindNode(size_t index, const PolicyLookup& lookup, const std::set<int>& read_values,
                          std::map<std::string, std::vector<std::string>>* missing) {
  const Node& n = graph_.nodes[index];
  const NodeFacts facts = FactsOf(n, read_values);
  auto step = std::make_unique<Step>();
  NodeBinding b;
  b.node = static_cast<int>(index);
  b.name = n.name;
  b.op_type = n.op_type;
  step->output = n.outputs.empty() ? -1 : n.outputs[0];
  b.shape = step->output < 0 ? "" : graph_.values[step->output].shape_known ? ShapeText(graph_.values[step->output].shape) : "?";
  // The providers of a node alone, in order; the first that claims it binds it. (A fused subgraph
  // claims its nodes before them, in Bind.)
  using Provider = Result<bool> (Executor::*)(const Node&, const NodeFacts&, const PolicyLookup&, Step*, NodeBinding*);
  static constexpr Provider kProviders[] = {&Executor::ClaimAlias, &Executor::ClaimTuned, &Executor::ClaimRegistry};
  bool claimed = false;
  for (Provider provider : kProviders) {
    auto claim = (this->*provider)(n, facts, lookup, step.get(), &b);
    if (!claim.ok()) return claim.status();
    if ((claimed = *claim)) break;
  }
  if (!claimed) {
    (*missing)[n.op_type].push_back(n.name);
    return Status::Ok();
  }
  // A kernel may write over an input it reads: a pointwise template, or an arena kernel that says so.
  pointwise_.push_back((IsPointwiseOp(n.op_type) && step->kind == Step::Kind::kDirect) ||
                       (step->kind == Step::Kind::kArena && step->arena->overwrites_input));
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
  // A subgraph touching a value whose shape is known only at run time is not fused (its nodes run
  // the registry's kernels), nor one whose anchor computes on a constant (see BindNode).
  auto static_shapes = [&](int node) {
    for (int v : graph_.nodes[node].inputs)
      if (v >= 0 && !graph_.values[v].shape_known) return false;
    for (int v : graph_.nodes[node].outputs)
      if (v >= 0 && !graph_.values[v].shape_known) return false;
    return true;
  };
  subgraphs.erase(std::remove_if(subgraphs.begin(), subgraphs.end(), [&](const Subgraph& s) {
                    if (!static_shapes(s.anchor) || graph_.IsConstant(graph_.nodes[s.anchor].inputs[0])) return true;
                    for (int n : s.chain)
                      if (!static_shapes(n)) return true;
                    return false;
                  }),
                  subgraphs.end());
  std::map<int, std::pair<const Subgraph*, FusionChoice>> fused_at;  // last fused chain node -> choice
  std::set<int> deferred;
  std::map<int, std::string> fusion_notes;  // anchor -> why the bank's fused policy was not used
  for (const Subgraph& s : subgraphs) {
    std::optional<FusionChoice> choice = fusion(s);
    if (choice && !choice->unusable.empty()) {
      fusion_notes[s.anchor] = "the bank's fused policy cannot run on this host's target (" + HostHalideTarget().to_string() + "): " + choice->unusable;
      choice.reset();
    }
    if (!choice) choice = BuiltinFusion(s, lookup);
    if (choice && choice->policy.fuse > 0 && choice->policy.fuse <= static_cast<int>(s.steps.size())) {
      const int nodes = s.NodesOf(choice->policy.fuse);
      fused_at[s.chain[nodes - 1]] = {&s, *choice};
      deferred.insert(s.anchor);
      deferred.insert(s.chain.begin(), s.chain.begin() + nodes - 1);
    }
  }
  // run_only_: a weight is freed from the graph once every node reading it is bound, each in a direct
  // step (which holds its own copy); a node bound otherwise pins it (Load copies it for that step).
  std::vector<int> unbound_readers(graph_.values.size(), 0);
  std::vector<bool> pinned(graph_.values.size(), false);
  auto constants_of = [&](int node) {
    std::set<int> constants;
    for (int v : graph_.nodes[node].inputs)
      if (graph_.IsConstant(v)) constants.insert(v);
    return constants;
  };
  if (run_only_)
    for (size_t n = 0; n < graph_.nodes.size(); ++n)
      for (int v : constants_of(static_cast<int>(n))) ++unbound_readers[v];
  auto bound_nodes = [&](const std::vector<int>& nodes, size_t first_step) {
    if (!run_only_) return;
    bool direct = true;
    for (size_t k = first_step; k < steps_.size(); ++k) direct &= steps_[k]->kind == Step::Kind::kDirect;
    for (int n : nodes)
      for (int v : constants_of(n)) {
        pinned[v] = pinned[v] || !direct;
        if (--unbound_readers[v] == 0 && !pinned[v]) ReleaseWeight(v);
      }
  };
  // Each node's bind time goes to the bindings it made (split evenly; fused: the one binding).
  auto timed = [&](size_t first_binding, std::chrono::steady_clock::time_point start) {
    const size_t made = bindings_.size() - first_binding;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for (size_t k = first_binding; k < bindings_.size(); ++k) bindings_[k].bind_ms += ms / made;
  };
  // The cube ops' kernels built ahead on a second thread (kernel_prefetch.h); each node settles its
  // job before it binds, and so before any weight it reads can be freed.
  KernelPrefetch prefetch;
  struct PrefetchScope {
    KernelPrefetch** slot;
    ~PrefetchScope() { *slot = nullptr; }
  } scope{&prefetch_};
  if (PrefetchKernels()) {
    PlanPrefetch(&prefetch, fused_at, deferred, lookup);
    prefetch.Start(LibraryThreadsHere(), /*wait_for_pending=*/ParallelBindMode() == "all");
    prefetch_ = &prefetch;
  }
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    if (deferred.count(static_cast<int>(index))) continue;
    const size_t first_step = steps_.size(), first_binding = bindings_.size();
    const auto start = std::chrono::steady_clock::now();
    auto it = fused_at.find(static_cast<int>(index));
    if (it == fused_at.end()) {
      prefetch.Settle(static_cast<int>(index));
      TB_RETURN_IF_ERROR(BindNode(index, lookup, read_values, &missing));
      bound_nodes({static_cast<int>(index)}, first_step);
      timed(first_binding, start);
      continue;
    }
    const auto& [s, choice] = it->second;
    std::vector<int> nodes(s->chain.begin(), s->chain.begin() + s->NodesOf(choice.policy.fuse));
    nodes.push_back(s->anchor);
    std::sort(nodes.begin(), nodes.end());
    for (int n : nodes) prefetch.Settle(n);
    auto bound = BindFused(*s, choice, lookup);
    if (!bound.ok()) return bound.status();
    // It cannot run fused: the nodes one by one, here, in graph order (an attention block's chain
    // starts before its anchor).
    if (!*bound)
      for (int n : nodes) TB_RETURN_IF_ERROR(BindNode(n, lookup, read_values, &missing));
    bound_nodes(nodes, first_step);
    timed(first_binding, start);
  }
  built_ahead_ = prefetch.taken();
  for (NodeBinding& b : bindings_)
    if (auto note = fusion_notes.find(b.node); note != fusion_notes.end() && b.policy_note.empty() && b.policy_source != "bank") b.policy_note = note->second;
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

}  // namespace tilebank::engine::model
