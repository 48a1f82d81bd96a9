// The model executor: every node bound at load to a kernel (a template kernel with the bank's
// policy for its operator, else the nearest entry's when it fits this shape, else the op class's
// built-in choice (engine/catalog/builtin_choice.h); the kernel registry's implementation for ops
// outside the tuned set; no kernel at all for reshapes, which reuse their input's memory), constant operands
// put once into the layout each kernel wants, and the run-time tensors placed in one arena by
// liveness so that buffers are reused. Run() is then a walk over the nodes.
// Layouts are decided across the model, not per node: a tensor stays in the layout its producer
// writes natively (oneDNN's blocked nChw16c, say) when every kernel that reads it reads that layout
// natively too, so that a chain of convolutions converts only where the layout changes; model inputs
// and outputs, and everything else, are row-major.
#pragma once
#include "engine/core/load_phases.h"
#include "engine/runtime/kernel_prefetch.h"
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/catalog/builtin_choice.h"
#include "engine/core/kernel.h"
#include "engine/ir/graph.h"
#include "engine/ir/node_op_spec.h"
#include "engine/passes/partition.h"
#include "engine/core/typed_tensor.h"
#include "engine/core/precision_mode.h"
#include "engine/core/zeroed_pages.h"
#include "engine/runtime/branch_plan.h"
#include "engine/core/search_space.h"
#include "engine/backends/fused_policy.h"
#include "repo/entry.h"

namespace tilebank::engine {
class OpTemplate;
}

namespace tilebank::engine::model {

// The bank's current entry for an operator, or (nearest) the entry of the closest shape of the same
// operator; nullopt: none, or stale.
struct FoundPolicy {
  Entry entry;
  bool nearest = false;
};
using PolicyLookup = std::function<std::optional<FoundPolicy>(const OpSpec& op)>;

// SGAT's choice for a subgraph (engine/passes/partition.h): how its chain runs inside the anchor
// (engine/backends/fused_policy.h: fuse 0 runs nothing fused) and where that choice came from
// ("bank", "builtin", "candidate", ...).
struct FusionChoice {
  FusedPolicy policy;
  std::string source;
  // Non-empty: the bank's choice, which this host's target cannot run (why); the executor runs the
  // built-in choice instead and its profile says so.
  std::string unusable = {};
};
// nullopt: the built-in choice (the anchor's oneDNN kernel with the chain's steps as post-ops, when
// the anchor runs in oneDNN anyway); no lookup at all: nothing is fused.
using FusionLookup = std::function<std::optional<FusionChoice>(const Subgraph& subgraph)>;

// One step of the run: a node, or a fused subgraph (named after its anchor, op_type "Conv+Relu").
struct NodeBinding {
  int node = -1;                     // index in graph().nodes (fused: the anchor's)
  std::string name, op_type, shape;  // shape: the output's, "1x64x56x56"
  std::string template_id;           // "" for the registry's kernels and aliases; kFusedTemplateId when fused
  std::string policy_source;         // "bank", "nearest", "builtin", "alias"; the registry's implementation
                                     // ("reference", "float32", "onednn"); "converts": the bank's policy
                                     // converted layouts on every run and impl.onednn was faster at load;
                                     // fused: the FusionChoice's
  std::string policy;                // "a=1,b=x" for template kernels
  std::string policy_note;           // "builtin": why the bank's policy was not used (this host's target cannot run it)
  std::string precision = "fp32";    // what the step computes in: its policy's, a fused step's anchor's (engine/core/precision_mode.h)
  std::optional<NodeOp> op;          // template-bound nodes: the operator (its bank key, its shapes); fused: the anchor's
  std::vector<std::string> fused_nodes;  // fused: the chain's node names
  std::string layout;                // the output's layout when handed over to the next kernels ("nChw16c"); "" row-major
  double bind_ms = 0;                // what choosing and building its kernel took at load (run --profile)
  int lane = -1;                     // 0 or 1: the lane it runs in beside another branch (branch_plan.h); -1: in turn
};

// How SwapSteps refuses a template other than impl.onednn at a step fused on oneDNN: no policy of
// that template runs there.
inline constexpr const char* kOnlyOneDnnRunsIt = "which only impl.onednn runs";

// Whether the executor hands tensors between kernels in their native layouts (see Executor).
// TILEBANK_MODEL_LAYOUTS=row-major turns it off, for comparison.
bool HandOverNativeLayouts();

// What a caller does with a loaded executor. `run_only` (tilebank run, the Python session): it is
// only run, so the graph's copy of each large constant (the weights) is freed once the
// steps reading it hold their own (a direct kernel's prepacked weights, the arena's float copies,
// the registry's typed ones): the weights are held once, during the load and after, where they
// were held twice. Those constants keep their shapes and types in graph(), not their values, and
// SwapSteps (tuning in the model) refuses such an executor.
struct LoadOptions {
  bool run_only = false;
  // The precisions the bank's policies may compute in (BindToBank): under force_fp32 an entry in
  // bf16 is passed over for the built-in choice (run --fp32).
  PrecisionMode precision = PrecisionMode::kAllowFp32ToBf16;
  // When given, LoadModel and Load add their phases' seconds to it (engine/core/load_phases.h).
  LoadPhases* phases = nullptr;
  // Whether independent branches run side by side, one thread each (branch_plan.h).
  BranchMode branches = BranchMode::kOff;
};

class Executor {
 public:
  // kInvalidInput listing every op type without a kernel with its node names, or naming the node
  // whose kernel failed to build; also when the arena and weights would not fit in memory, or when
  // TILEBANK_DEFAULT_POLICIES has a value it does not know.
  // `fusion`, when given, is asked about each subgraph of the graph; a fused choice oneDNN cannot
  // run falls back to the unfused nodes.
  // `options.run_only`: see LoadOptions.
  static Result<std::unique_ptr<Executor>> Load(Graph graph, const PolicyLookup& lookup, const FusionLookup& fusion = nullptr,
                                                LoadOptions options = {});

  // Inputs in the order of graph().inputs, shapes as the graph says; outputs in graph().outputs
  // order. `node_us`, when given, receives each node's time in microseconds. This float32 form
  // refuses a model with inputs or outputs of other types; the typed one takes every dtype.
  Status Run(const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs, std::vector<double>* node_us = nullptr);
  Status Run(const std::vector<const TypedTensor*>& inputs, std::vector<TypedTensor>* outputs, std::vector<double>* node_us = nullptr);

  // In-context trials (tuning a model's operators): every step that runs the operator of bank key
  // `op_key` alone (not fused) takes a kernel of `t` under `policy`, bound as the model binds it
  // (its constants as prepacked weights, the layouts its neighbours hand over); RestoreSteps puts
  // the model's own kernels back. Returns the steps swapped; kInvalidInput, with nothing swapped,
  // when no step runs the op alone, or the kernel cannot take a step's layouts or placement.
  Result<std::vector<size_t>> SwapSteps(const std::string& op_key, const OpTemplate& t, const Policy& policy);
  void RestoreSteps();
  // What the kernels swapped in run (Kernel::Identity, joined); "" when one does not say.
  std::string SwappedIdentity() const;

  // The bank's answers this model was bound with, replayed: binding the graph again with it gives
  // the same policies whatever the bank holds by then (an operator it was not asked about runs the
  // built-in choice). A tuning job's baseline is the model as it was before the job wrote entries.
  PolicyLookup LookupAsBound() const;


  const Graph& graph() const { return graph_; }
  const std::vector<NodeBinding>& bindings() const { return bindings_; }
  // The layout run-time value `value` is handed over in (row-major: an empty key).
  const HandoverLayout& LayoutOf(int value) const { return layout_of_[value]; }
  // How many kernels a second thread built ahead while the model was bound (KernelPrefetch).
  size_t kernels_built_ahead() const { return built_ahead_; }
  // How many steps compute in less than float32 (bank policies of a job that allowed bf16).
  size_t LowerPrecisionSteps() const {
    return static_cast<size_t>(std::count_if(bindings_.begin(), bindings_.end(), [](const NodeBinding& b) { return b.precision != "fp32"; }));
  }
  uint64_t arena_bytes() const { return arena_floats_ * sizeof(float); }
  uint64_t constant_bytes() const { return constant_bytes_; }
  // Bytes of the constants' typed copies the registry steps still read (freed, run_only, once their
  // kernels hold copies of their own: typed_readers_).
  uint64_t typed_constant_bytes() const;

 private:
  struct Step;
  Executor() = default;
  Status Bind(const PolicyLookup& lookup, const FusionLookup& fusion);
  // Binds `kernel` to `step`'s inputs (already set): weights into its layout, direct or copying.
  Status BindKernel(Step* step, std::unique_ptr<Kernel> kernel);
  // Makes `step` run `kernel`, already bound on the direct path (built ahead).
  void AdoptDirect(Step* step, std::unique_ptr<Kernel> kernel);
  // Builds `t`'s kernel under `policy` for the node and binds it (or takes it from prefetch_).
  Status BindTemplate(Step* step, const NodeOp& node_op, const OpTemplate& t, const Policy& policy);
  // Plans the cube ops' kernels (oneDNN convolutions and products, fused or not) that a second
  // thread builds ahead of Bind (engine/runtime/kernel_prefetch.h): the choices Bind will make.
  void PlanPrefetch(KernelPrefetch* prefetch, const std::map<int, std::pair<const Subgraph*, FusionChoice>>& fused_at,
                    const std::set<int>& deferred, const PolicyLookup& lookup);
  // A oneDNN anchor's policy inside a fused subgraph: the bank's impl.onednn policy for it, else
  // empty (oneDNN's first choice); `source` says which entry.
  Policy FusedAnchorPolicy(const OpSpec& op, const PolicyLookup& lookup, std::string* source = nullptr) const;
  // One step on its own, on zeros: the fastest of a few runs, in seconds (1e30 when it fails).
  double TimeStepAlone(Step& step);
  Status RunStep(Step& step, const std::vector<const float*>& in, float* out);
  // A kRegistry step: its inputs as TypedTensors (arena values copied), its outputs stored.
  Status RunRegistryStep(Step& step);
  // run_only_, once per step (after its first Compute, or PrepareRegistryStepAhead when its kernel
  // then holds a constant): frees the typed copy of each constant no step reads any more.
  void CountHoldings(Step& step);
  // A kRegistry step's kernel prepares at load what it can (OpKernel::PrepareAhead) from its constants,
  // already typed, and the shapes of its other inputs.
  void PrepareRegistryStepAhead(Step& step);
  // The steps, once the inputs are in place.
  Status RunSteps(std::vector<double>* node_us);
  // Step i; `in` is scratch for its input pointers; its time into (*node_us)[i] when given.
  Status RunOneStep(size_t i, std::vector<const float*>* in, std::vector<double>* node_us);
  // Side by side (executor_branches.cpp): reorders the steps so that each stretch found runs as two
  // lanes (side_by_side_); nothing when `mode` is off or the process has one thread.
  Status PlanSideBySide(BranchMode mode);
  bool RunsOnAnyThread(const Step& s) const;
  // The two lanes of `b`, one thread each; the first error of either.
  Status RunSideBySide(const BranchSection& b, std::vector<double>* node_us);
  // The lighter lane's estimated cost at least this share of the heavier's.
  static constexpr double kMinBranchBalance = 0.5;
  // Whether registry step `s` has one output and every run-time input in the arena: what
  // OpKernel::ComputeOnBuffers reads and writes.
  bool OnArenaBuffers(const Step& s) const;
  // Binds node `n` to the kernel registry's kernel; kInvalidInput when the registry has none.
  Status BindRegistry(const Node& n, NodeBinding* b, Step* step, const std::string& onednn_impl = "");  // the int8 ops' policy
  // Whether value `v` is computed into the arena (float32, not a constant); other run-time values
  // are TypedTensors held in typed_.
  bool InArena(int v) const {
    return v >= 0 && !graph_.IsConstant(v) && graph_.values[v].kind == ValueKind::kTensor && graph_.values[v].dtype == "float32" &&
           graph_.values[v].shape_known;
  }
  // Binds node `index` alone: the first provider that claims it (a node none claims is recorded in
  // `missing`, op type -> node names).
  Status BindNode(size_t index, const PolicyLookup& lookup, const std::set<int>& read_values,
                  std::map<std::string, std::vector<std::string>>* missing);
  // What the providers read about a node.
  struct NodeFacts {
    // The registry's kernels only: an input or output not float32 or of a run-time shape, a second
    // output in use, or every input constant (the tuned kernels read constants as prepacked weights).
    bool typed = false;
    bool runtime_input = false;  // input 0 is computed at run time
  };
  NodeFacts FactsOf(const Node& n, const std::set<int>& read_values) const;
  // The providers, in BindNode's order. Each binds the node into `step` and `b` and returns true
  // when it runs it; false passes it on; an error refuses the model.
  // An alias: Reshape and friends, a pass-through Pad or Concat, of a run-time float32 value.
  Result<bool> ClaimAlias(const Node& n, const NodeFacts& facts, const PolicyLookup& lookup, Step* step, NodeBinding* b);
  // A tuned implementation with the bank's policy, the nearest entry's or the built-in choice: the
  // float32 templates of a tuned op type, and the int8 ops' oneDNN implementation on the registry's kernel.
  Result<bool> ClaimTuned(const Node& n, const NodeFacts& facts, const PolicyLookup& lookup, Step* step, NodeBinding* b);
  // The registry's kernel (its arena form where it has one).
  Result<bool> ClaimRegistry(const Node& n, const NodeFacts& facts, const PolicyLookup& lookup, Step* step, NodeBinding* b);
  // The template and policy an operator runs with (the bank's, the nearest entry's, or the built-in
  // choice), and where they came from. A stored policy this host's target cannot run is passed
  // over for the built-in choice, `note` saying why.
  struct PolicyChoice {
    const OpTemplate* tmpl = nullptr;
    Policy policy;
    std::string source, note;
  };
  PolicyChoice ChoosePolicy(const OpSpec& op, const PolicyLookup& lookup) const;
  // The built-in fusion of `s` (nullopt: none): every leading step oneDNN runs as a post-op, when
  // the anchor runs in oneDNN anyway; a convolution's up to the first whole-sized operand past its sum.
  std::optional<FusionChoice> BuiltinFusion(const Subgraph& s, const PolicyLookup& lookup) const;
  // Binds subgraph `s` with its first `choice.policy.fuse` chain steps inside the anchor; false when the
  // implementation cannot run them.
  // A oneDNN anchor runs the policy `lookup` chooses for it when that is impl.onednn's.
  Result<bool> BindFused(const Subgraph& s, const FusionChoice& choice, const PolicyLookup& lookup);
  // Decides each run-time value's layout (layout_of_) and tells the kernels.
  Status HandOverLayouts();
  // Tells a kernel that converts layouts (Kernel::ConvertsLayouts) those of its values.
  Status UseGivenLayouts(Step& s);
  // Tells direct step `s`'s kernel which of its values come and go in its native layouts, and which
  // of those narrow (layout_of_); refuses, naming it, a layout the kernel does not read or write.
  Status UseHandedLayouts(Step& s);
  // Tells a family step's kernel (the plan's, in its group's family) which of its values are narrow.
  Status UseNarrowFamilyLayouts(Step& s);
  void PlanMemory();
  // The typed values registry steps compute (shapes known per run, held in typed_) share buffers
  // where their lives do not overlap: each is put back in its slot after its last reader, and the
  // next value of that slot is computed over it (ReshapeForOverwrite keeps its capacity). Lives
  // that touch a side-by-side stretch span all of it. Graph outputs, and values of other kinds
  // than tensors, keep their own.
  void PlanTypedSlots();
  // After step `i` (or a side-by-side stretch ending there): its typed values back in their slots.
  void ReleaseTypedAfter(size_t i);
  float* Address(int value);
  // An arena step's input of another type than float32 (Where's condition): read as the elements of
  // its typed value (op_kernel.h), constants included.
  bool ReadsTyped(const Step& s, int value) const;
  // What step `s` reads for `value`: its memory (Address), or the elements of a typed value it reads.
  const float* StepInput(const Step& s, int value);

  Graph graph_;
  // What Load's lookup answered, by canonical operator text (LookupAsBound).
  std::shared_ptr<std::map<std::string, std::optional<FoundPolicy>>> answers_as_bound_;
  KernelPrefetch* prefetch_ = nullptr;  // while Bind runs: kernels built ahead on a second thread
  size_t built_ahead_ = 0;
  DefaultPolicies default_policies_ = DefaultPolicies::kBuiltin;
  std::vector<NodeBinding> bindings_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<bool> pointwise_;           // per step: may write over an input it reads
  std::vector<BranchSection> side_by_side_;  // stretches of steps_ that run as two lanes
  std::vector<HandoverLayout> layout_of_;  // value -> its layout (row-major: empty key)
  std::vector<int> storage_of_;           // value -> storage id (-1: constant or unused)
  std::vector<int64_t> storage_offset_;   // storage -> offset in the arena (floats)
  std::vector<std::vector<float>> constant_data_;  // value -> its float data (constants only)
  std::vector<TypedTensor> typed_;                // value -> its TypedTensor: run-time values not in the arena, and
                                                  // the constants kRegistry steps read
  // run_only_: constant -> the step inputs that read it and are not known to hold a copy of their
  // own (OpKernel::HoldsConstantInput, counted after each registry step's first Compute). At zero
  // its data in typed_ is freed: a Conv3d's weights are then held once, packed, not twice.
  std::vector<int> typed_readers_;
  std::vector<int> typed_slot_of_;                   // value -> its slot in typed_slots_ (-1: none); PlanTypedSlots
  std::vector<TypedTensor> typed_slots_;             // buffers the slotted typed values take turns in
  std::vector<std::vector<int>> typed_release_after_;  // step -> the slotted values it reads last
  std::vector<bool> not_float32_;  // value -> its dtype is not float32 (ReadsTyped, on every step's run)
  ZeroedPages arena_block_;
  float* arena_ = nullptr;  // arena_block_'s floats
  std::vector<std::pair<size_t, std::unique_ptr<Step>>> swapped_;  // SwapSteps: the model's own steps
  int64_t arena_floats_ = 0;
  uint64_t constant_bytes_ = 0;
  bool run_only_ = false;          // LoadOptions::run_only
  bool weights_released_ = false;  // some of the graph's weights were freed (run_only_)
  size_t released_since_trim_ = 0;  // bytes ReleaseWeight freed since the heap's free pages last went back
  // Frees the graph's copy of constant `v` when it is a float32 one of kReleasedWeightBytes or more,
  // or an integer one (8-bit weights) of kReleasedIntegerWeightBytes / 8 elements or more, and not
  // a graph output. Small constants stay: shapes, scales, zero points and bounds others read.
  static constexpr size_t kReleasedWeightBytes = 64 * 1024, kReleasedIntegerWeightBytes = 1024 * 1024;
  void ReleaseWeight(int v);

 public:
  ~Executor();
};

}  // namespace tilebank::engine::model
