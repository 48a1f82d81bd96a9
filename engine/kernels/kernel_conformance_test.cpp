// The registry's kernels on ONNX's own node tests (libonnx-testdata): every single-node test whose
// op the registry has runs through the kernel the registry makes for it, in this process, and its
// outputs are matched against ONNX's expected ones (engine/core/tensor_compare.h). It prints each
// op's count of matches, mismatches and refusals; none may mismatch, and matches may only rise.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "engine/kernels/kernel_registry.h"
#include "engine/ir/node_attributes.h"
#include "engine/ir/tensor_proto.h"
#include "engine/core/tensor_compare.h"

namespace tilebank::engine::kernels {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

enum class Outcome { kMatch, kMismatch, kRefused, kNotATest };

// ONNX 1.12's test data holds bfloat16 tensors as uint16 (numpy has no bfloat16): the bits are the
// value the model declares.
void AsDeclared(const onnx::ValueInfoProto& declared, TypedTensor* t) {
  if (declared.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 && t->dtype == DType::kUInt16) t->dtype = DType::kBFloat16;
}

struct CaseResult {
  Outcome outcome = Outcome::kNotATest;
  std::string op_type, why;
  std::vector<std::string> implementations;  // those that ran and matched
};

CaseResult RunCase(const fs::path& dir) {
  CaseResult r;
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!model.ParseFromIstream(&in) || model.graph().node_size() != 1) return r;
  const onnx::NodeProto& node = model.graph().node(0);
  if (!node.domain().empty() && node.domain() != "ai.onnx") return r;
  r.op_type = node.op_type();
  if (!KernelRegistry::Default().Has(node.op_type())) return r;
  int opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  // The graph's inputs by name: initializers, then the test data's input_<i>.pb in order.
  std::map<std::string, TypedTensor> values;
  for (const auto& init : model.graph().initializer()) {
    auto t = model::TensorFromProto(init);
    if (!t.ok()) return r;
    values[init.name()] = std::move(t.value());
  }
  const fs::path data = dir / "test_data_set_0";
  int next = 0;
  for (const auto& input : model.graph().input()) {
    if (values.count(input.name())) continue;
    auto t = model::ReadValueFile((data / ("input_" + std::to_string(next++) + ".pb")).string(), model::KindOfType(input.type()),
                                  model::ElementTypeOf(input.type()));
    if (!t.ok()) return r;  // maps and the like: not values the executor has
    AsDeclared(input, &t.value());
    values[input.name()] = std::move(t.value());
  }
  KernelInfo info;
  info.op_type = node.op_type();
  info.node_name = dir.filename().string();
  auto attributes = model::ReadNodeAttributes(node);
  if (!attributes.ok()) return r;
  info.attrs = Attrs(std::move(attributes->attrs));
  info.tensor_attrs = std::move(attributes->tensors);
  info.graphs = std::move(attributes->graphs);
  info.opset = opset;
  info.num_outputs = node.output_size();
  KernelInputs inputs;
  for (const std::string& name : node.input()) {
    const auto it = name.empty() ? values.end() : values.find(name);
    inputs.push_back(it == values.end() ? nullptr : &it->second);
    info.input_types.push_back(it == values.end() ? DType::kUndefined : it->second.dtype);
    info.input_kinds.push_back(it == values.end() ? ValueKind::kTensor : it->second.kind);
  }
  // What a model exported with this node would hold at load: every shape static, the operands
  // after the first constants (initializers). The implementations that apply to that instance
  // (the arena ones among them) run beside the reference and must match as it does.
  std::vector<TypedTensor> wants;
  std::vector<int> want_index;  // per graph output: the node output it is
  for (int k = 0; k < model.graph().output_size(); ++k) {
    const auto& declared = model.graph().output(k).type();
    auto want = model::ReadValueFile((data / ("output_" + std::to_string(k) + ".pb")).string(), model::KindOfType(declared), model::ElementTypeOf(declared));
    if (!want.ok()) return CaseResult{};
    AsDeclared(model.graph().output(k), &want.value());
    int index = 0;
    while (index < node.output_size() && node.output(index) != model.graph().output(k).name()) ++index;
    if (index == node.output_size()) return CaseResult{};
    wants.push_back(std::move(want.value()));
    want_index.push_back(index);
  }
  KernelInfo loaded = info;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool tensor = inputs[i] && inputs[i]->kind == ValueKind::kTensor;
    loaded.input_shapes.push_back(tensor ? std::optional(inputs[i]->shape) : std::nullopt);
    loaded.constant_inputs.push_back(tensor && i > 0 ? std::make_shared<const TypedTensor>(*inputs[i]) : nullptr);
  }
  loaded.output_shapes.resize(static_cast<size_t>(node.output_size()));
  for (size_t k = 0; k < wants.size(); ++k)
    if (wants[k].kind == ValueKind::kTensor) loaded.output_shapes[want_index[k]] = wants[k].shape;
  std::vector<std::pair<std::string, const KernelInfo*>> runs = {{KernelDef::kReferenceImplementation, &info}};
  for (const std::string& name : KernelRegistry::Default().Implementations(loaded))
    if (name != KernelDef::kReferenceImplementation) runs.push_back({name, &loaded});
  r.outcome = Outcome::kMatch;
  for (const auto& [name, made_for] : runs) {
    auto kernel = KernelRegistry::Default().Create(*made_for, name);
    std::vector<TypedTensor> outputs(static_cast<size_t>(node.output_size()));
    const int64_t draws_before = RandomDraws();
    Status computed = kernel.ok() ? (*kernel)->Compute(inputs, &outputs) : kernel.status();
    if (!computed.ok()) {
      if (name != KernelDef::kReferenceImplementation) continue;  // a faster one may refuse what the reference takes
      r.outcome = Outcome::kRefused;
      r.why = computed.message();
      return r;
    }
    r.implementations.push_back(name);
    for (size_t k = 0; k < wants.size(); ++k) {
      const TensorMatch m = MatchTensor(outputs[want_index[k]], wants[k]);
      if (!m.ok) {
        // As run --data: outputs drawn at random cannot reproduce another runtime's stream.
        r.outcome = RandomDraws() > draws_before ? Outcome::kRefused : Outcome::kMismatch;
        r.why = name + ": output " + std::to_string(k) + (r.outcome == Outcome::kRefused ? " depends on random draws: " : ": ") + m.worst;
        return r;
      }
    }
  }
  return r;
}

TEST_CASE("kernel registry: ONNX's node tests of the registry's ops match, none mismatch") {
  REQUIRE_MESSAGE(fs::is_directory(kNodeTests), "install libonnx-testdata (scripts/setup.sh does)");
  std::map<std::string, std::array<int, 3>> by_op;  // match, mismatch, refused
  std::map<std::string, int> by_implementation;     // cases each implementation ran and matched
  std::vector<std::string> mismatches, refusals;
  int matched = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kNodeTests)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    const CaseResult r = RunCase(dir);
    if (r.outcome == Outcome::kNotATest) continue;
    auto& counts = by_op[r.op_type];
    if (r.outcome == Outcome::kMatch) {
      ++counts[0], ++matched;
      for (const std::string& name : r.implementations) ++by_implementation[name];
    }
    if (r.outcome == Outcome::kMismatch) ++counts[1], mismatches.push_back(dir.filename().string() + ": " + r.why);
    if (r.outcome == Outcome::kRefused) ++counts[2], refusals.push_back(dir.filename().string() + ": " + r.why);
  }
  for (const auto& [op, c] : by_op) MESSAGE(op << ": " << c[0] << " match, " << c[1] << " mismatch, " << c[2] << " refused");
  for (const auto& m : mismatches) MESSAGE("mismatch " << m);
  for (const auto& m : refusals) MESSAGE("refused " << m);
  MESSAGE(matched << " node tests match through the registry's kernels");
  for (const auto& [name, count] : by_implementation) MESSAGE(name << ": " << count << " cases match");
  CHECK(mismatches.empty());
  CHECK(matched >= 785);  // the floor: raise it as the registry grows (the line printed)
  // The faster implementations take part: oneDNN's (Conv, ConvTranspose, MatMul, Gemm, the recurrent
  // ops), the arena's (data movement, Clip, Pow, ...) and the float32 unary functions at any shape.
  CHECK(by_implementation["onednn"] >= 30);
  CHECK(by_implementation["float32"] >= 60);
  CHECK(by_implementation["simd"] >= 40);
}

}  // namespace
}  // namespace tilebank::engine::kernels
