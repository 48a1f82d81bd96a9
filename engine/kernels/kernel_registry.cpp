#include "engine/kernels/kernel_registry.h"

#include <algorithm>

namespace tilebank::engine::kernels {
namespace {

std::string TypeList(const std::vector<DType>& types) {
  std::string text;
  for (DType d : types) text += (text.empty() ? "" : ", ") + DTypeName(d);
  return text;
}

}  // namespace

const std::vector<DType>& FloatTypes() {
  static const std::vector<DType> types = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  return types;
}

const std::vector<DType>& IntegerTypes() {
  static const std::vector<DType> types = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                           DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
  return types;
}

const std::vector<DType>& NumericTypes() {
  static const std::vector<DType> types = [] {
    std::vector<DType> t = FloatTypes();
    t.insert(t.end(), IntegerTypes().begin(), IntegerTypes().end());
    return t;
  }();
  return types;
}

const std::vector<DType>& AllTypes() {
  static const std::vector<DType> types = [] {
    std::vector<DType> t = NumericTypes();
    t.push_back(DType::kBool);
    t.push_back(DType::kString);
    return t;
  }();
  return types;
}

const KernelRegistry& KernelRegistry::Default() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    using Family = void (*)(KernelRegistry*);
    for (Family family : {RegisterElementwiseKernels, RegisterUnaryKernels, RegisterCastKernels, RegisterShapeKernels, RegisterMovementKernels,
                          RegisterIndexKernels, RegisterReduceKernels, RegisterMathKernels, RegisterConvKernels, RegisterPoolKernels, RegisterNormKernels,
                          RegisterLossKernels, RegisterRandomKernels, RegisterResizeKernels, RegisterVisionKernels, RegisterLinalgKernels, RegisterQuantizeKernels, RegisterRnnKernels,
                          RegisterSignalKernels, RegisterStringKernels, RegisterControlFlowKernels, RegisterSequenceKernels, RegisterFusedGemmKernels,
                          RegisterTypedIndexKernels, RegisterTypedReduceKernels, RegisterFloat32ArenaKernels, RegisterRoiAlignArenaKernel, RegisterScatterNDArenaKernel, RegisterTunableKernels}) family(&r);
    return r;
  }();
  return registry;
}

void KernelRegistry::Add(KernelDef def) {
  const std::string op = def.op_type;
  defs_.emplace(op, std::move(def));
}

Result<std::vector<const KernelDef*>> KernelRegistry::Applicable(const KernelInfo& info) const {
  auto [first, last] = defs_.equal_range(info.op_type);
  if (first == last) return info.Bad("the executor has no kernel for " + info.op_type);
  std::vector<const KernelDef*> taken;
  std::vector<DType> offered;
  bool opset_matched = false, kind_refused = false;
  size_t non_tensor = info.input_kinds.size();  // the first input that is a sequence or optional
  for (size_t i = 0; i < info.input_kinds.size() && non_tensor == info.input_kinds.size(); ++i)
    if (info.input_kinds[i] != ValueKind::kTensor) non_tensor = i;
  for (auto it = first; it != last; ++it) {
    const KernelDef& def = it->second;
    if (info.opset < def.since_opset || info.opset > def.until_opset) continue;
    opset_matched = true;
    if (non_tensor < info.input_kinds.size() && !def.any_kind) {
      kind_refused = true;
      continue;
    }
    const DType given = info.InputType(def.type_input);
    // A kernel taking sequences checks its elements' dtype itself.
    const bool type_ok = (def.any_kind && info.InputKind(def.type_input) != ValueKind::kTensor) || def.types.empty() ||
                         std::find(def.types.begin(), def.types.end(), given) != def.types.end();
    if (!type_ok) {
      for (DType d : def.types)
        if (std::find(offered.begin(), offered.end(), d) == offered.end()) offered.push_back(d);
      continue;
    }
    if (!def.applies || def.applies(info)) taken.push_back(&def);
  }
  if (!taken.empty()) return taken;
  if (!opset_matched) return info.Bad("no kernel of " + info.op_type + " for opset " + std::to_string(info.opset));
  if (kind_refused && offered.empty())
    return info.Bad(info.op_type + " takes tensors; input " + std::to_string(non_tensor) + " is a " + ValueKindName(info.input_kinds[non_tensor]));
  return info.Bad("no kernel of " + info.op_type + " for " + DTypeName(info.InputType(first->second.type_input)) + " (it has " +
                  TypeList(offered) + ")");
}

Result<std::unique_ptr<OpKernel>> KernelRegistry::Create(const KernelInfo& info, std::string* implementation) const {
  auto defs = Applicable(info);
  if (!defs.ok()) return defs.status();
  for (auto it = defs->rbegin(); it != defs->rend(); ++it) {
    auto kernel = (*it)->make(info);
    if (kernel.ok() || std::next(it) == defs->rend()) {
      if (kernel.ok() && implementation) *implementation = (*it)->implementation;
      return kernel;
    }
  }
  return info.Bad("no kernel");  // not reached: the table's first entry returned above
}

Result<std::unique_ptr<OpKernel>> KernelRegistry::Create(const KernelInfo& info, const std::string& implementation) const {
  auto defs = Applicable(info);
  if (!defs.ok()) return defs.status();
  for (const KernelDef* def : *defs)
    if (def->implementation == implementation) return def->make(info);
  std::string names;
  for (const KernelDef* def : *defs) names += (names.empty() ? "" : ", ") + def->implementation;
  return info.Bad("no implementation '" + implementation + "' of " + info.op_type + " takes this instance (it has " + names + ")");
}

std::vector<std::string> KernelRegistry::Implementations(const KernelInfo& info) const {
  std::vector<std::string> names;
  if (auto defs = Applicable(info); defs.ok())
    for (const KernelDef* def : *defs) names.push_back(def->implementation);
  return names;
}

std::vector<std::string> KernelRegistry::OpTypes() const {
  std::vector<std::string> ops;
  for (auto it = defs_.begin(); it != defs_.end(); it = defs_.upper_bound(it->first)) ops.push_back(it->first);
  return ops;
}

void KernelRegistry::AddTunable(const std::string& op_type, const OpTemplate* tunable) { tunables_.emplace(op_type, tunable); }

std::vector<const OpTemplate*> KernelRegistry::Tunables(const std::string& op_type) const {
  std::vector<const OpTemplate*> found;
  for (auto [it, last] = tunables_.equal_range(op_type); it != last; ++it) found.push_back(it->second);
  return found;
}

const OpTemplate* KernelRegistry::TunableById(const std::string& id) const {
  for (const auto& [op_type, tunable] : tunables_)
    if (id == tunable->id()) return tunable;
  return nullptr;
}

std::vector<std::string> KernelRegistry::TunableOpTypes() const {
  std::vector<std::string> ops;
  for (auto it = tunables_.begin(); it != tunables_.end(); it = tunables_.upper_bound(it->first)) ops.push_back(it->first);
  return ops;
}

}  // namespace tilebank::engine::kernels
