// One registry of the executor's kernels, as ONNX Runtime's KernelRegistry: op type + opset range
// + the dtypes of one constrained input -> a factory. Each family of ops registers its kernels in a
// file of its own (engine/kernels/*_kernels.cpp), one line per kernel; KernelRegistry::Default()
// names every family.
//
// An op's kernels form its implementation table, as oneDNN's implementation lists do: the
// reference first (every dtype the op allows, plain loops in double: the oracle the tuner's checks
// and the tests trust; constant folding runs what applies at any shape), then the faster
// implementations of some instances, each named (`implementation`) and saying when it applies.
// Create runs the last one that applies, the most specialized; Create(info, name) a named one.
// After them come the op's tunable implementations: templates (Halide, SIMD, oneDNN, OpenBLAS,
// int8) whose search space the tuner searches and whose policy the bank or the built-in choice
// names (engine/kernels/tunable_kernels.cpp).
// A new implementation of either kind is one line in the table.
#pragma once
#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/backends/op_template.h"
#include "engine/kernels/op_kernel.h"

namespace tilebank::engine::kernels {

using KernelFactory = std::function<Result<std::unique_ptr<OpKernel>>(const KernelInfo& info)>;

struct KernelDef {
  std::string op_type;
  int since_opset = 1, until_opset = INT_MAX;  // inclusive
  std::vector<DType> types;  // the dtypes input `type_input` may have; empty: any
  int type_input = 0;
  KernelFactory make;
  // Whether its inputs may be sequences and optionals (Identity, If, Loop, the Sequence* and
  // Optional* ops); every other kernel is made for tensors only, and Create refuses it otherwise.
  bool any_kind = false;
  // Its name in the op's table: "reference", or what it runs on ("onednn", ...).
  std::string implementation = kReferenceImplementation;
  // Whether it takes the instance `info` describes, beyond opset and dtype; empty: every one.
  std::function<bool(const KernelInfo& info)> applies = nullptr;

  static constexpr const char* kReferenceImplementation = "reference";
};

// The dtype lists kernels are registered for.
const std::vector<DType>& FloatTypes();    // float16, bfloat16, float32, float64
const std::vector<DType>& IntegerTypes();  // int8..int64, uint8..uint64
const std::vector<DType>& NumericTypes();  // both
const std::vector<DType>& AllTypes();      // both, bool and string

class KernelRegistry {
 public:
  // Every family's kernels, registered once.
  static const KernelRegistry& Default();

  void Add(KernelDef def);
  // The kernel for the node `info` describes: the last implementation in its op's table that takes
  // it (one whose factory refuses the instance passes it to the one before, down to the reference);
  // `implementation`, when given, gets its name. kInvalidInput naming the node when the registry has
  // no kernel of its op type, none for its opset, or none for its dtypes (naming those it has).
  Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, std::string* implementation = nullptr) const;
  // The implementation named `implementation` ("reference": the oracle); kInvalidInput when the
  // op's table has none of that name that takes the instance.
  Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, const std::string& implementation) const;
  // The names of the implementations that take the instance, in table order (the reference first).
  std::vector<std::string> Implementations(const KernelInfo& info) const;
  bool Has(const std::string& op_type) const { return defs_.count(op_type) > 0; }
  std::vector<std::string> OpTypes() const;

  // A tunable implementation at the end of `op_type`'s table. Create never picks one by itself: it
  // runs with a policy (OpTemplate::Build), one the tuner found or the built-in choice names.
  void AddTunable(const std::string& op_type, const OpTemplate* tunable);
  // `op_type`'s tunable implementations in table order (whether each takes an instance: Supports).
  std::vector<const OpTemplate*> Tunables(const std::string& op_type) const;
  // The tunable implementation whose id() is `id`; nullptr when none is.
  const OpTemplate* TunableById(const std::string& id) const;
  // Every op type with a tunable implementation, sorted.
  std::vector<std::string> TunableOpTypes() const;

 private:
  // The definitions of `info`'s op that take it (opset, kind, dtype and `applies`), in table order;
  // when none does, kInvalidInput saying why.
  Result<std::vector<const KernelDef*>> Applicable(const KernelInfo& info) const;

  std::multimap<std::string, KernelDef> defs_;  // per op type in registration (table) order
  std::multimap<std::string, const OpTemplate*> tunables_;  // likewise, after defs_ in each table
};

// How many values the random kernels (Bernoulli, Dropout in training mode, Random*) have drawn in
// this process: outputs that depend on draws cannot be checked against another runtime's.
int64_t RandomDraws();

// The families (one file each); Default() calls them all.
void RegisterElementwiseKernels(KernelRegistry* registry);
void RegisterUnaryKernels(KernelRegistry* registry);
void RegisterCastKernels(KernelRegistry* registry);
void RegisterShapeKernels(KernelRegistry* registry);
void RegisterMovementKernels(KernelRegistry* registry);
void RegisterIndexKernels(KernelRegistry* registry);
void RegisterReduceKernels(KernelRegistry* registry);
void RegisterMathKernels(KernelRegistry* registry);
void RegisterConvKernels(KernelRegistry* registry);
void RegisterPoolKernels(KernelRegistry* registry);
void RegisterNormKernels(KernelRegistry* registry);
void RegisterLossKernels(KernelRegistry* registry);
void RegisterRandomKernels(KernelRegistry* registry);
void RegisterResizeKernels(KernelRegistry* registry);
void RegisterVisionKernels(KernelRegistry* registry);
void RegisterLinalgKernels(KernelRegistry* registry);
void RegisterQuantizeKernels(KernelRegistry* registry);
void RegisterRnnKernels(KernelRegistry* registry);
void RegisterSignalKernels(KernelRegistry* registry);
void RegisterStringKernels(KernelRegistry* registry);
void RegisterControlFlowKernels(KernelRegistry* registry);
void RegisterSequenceKernels(KernelRegistry* registry);
// FusedGemm, written by engine/passes/dynamic_gemm_fusion.h (fused_gemm_kernels.cpp).
void RegisterFusedGemmKernels(KernelRegistry* registry);
// The typed implementations (typed_kernel.h) of Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, NonZero, TopK, OneHot, ArgMax, ArgMin and Transpose (index_typed_kernels.cpp), and of
// the reductions (reduce_typed_kernels.cpp).
void RegisterTypedIndexKernels(KernelRegistry* registry);
void RegisterTypedReduceKernels(KernelRegistry* registry);
// Then the float32 arena implementations, each at the end of its op's table.
void RegisterFloat32ArenaKernels(KernelRegistry* registry);
void RegisterRoiAlignArenaKernel(KernelRegistry* registry);  // roi_align_arena_kernel.cpp
void RegisterScatterNDArenaKernel(KernelRegistry* registry);  // scatter_nd_arena_kernel.cpp
// Then the tunable implementations.
void RegisterTunableKernels(KernelRegistry* registry);

}  // namespace tilebank::engine::kernels
