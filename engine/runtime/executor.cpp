#include "engine/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

#include "engine/backends/halide/builder.h"
#include "engine/backends/halide/kernel_disk_cache.h"
#include "engine/core/heap_blocks.h"
#include "engine/core/parallel_for.h"
#include "engine/core/sample_stats.h"
#include "engine/core/zeroed_pages.h"
#include "engine/runtime/executor_step.h"
#include "engine/catalog/op_list_check.h"
#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::model {

Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::Load(Graph graph, const PolicyLookup& lookup, const FusionLookup& fusion, LoadOptions options) {
  PrepareHeapForLoading();
  ReturnFreeHeapPages();  // what importing freed (the proto's bytes)
  PhaseClock clock;
  std::unique_ptr<Executor> e(new Executor());
  auto defaults = DefaultPoliciesFromEnvironment();
  if (!defaults.ok()) return defaults.status();
  e->default_policies_ = *defaults;
  e->run_only_ = options.run_only;
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
    NodeOpSpecMemo node_ops(e->graph_);  // the graph's nodes stay as they are until the plans are made
    {
      // Compiled kernels persist across processes (engine/backends/halide/kernel_disk_cache.h).
      const std::string cache_dir = DefaultKernelCacheDir();
      KernelDiskCacheScope scope(cache_dir.empty() ? nullptr : &KernelDiskCacheAt(cache_dir));
      auto answers = std::make_shared<std::map<std::string, std::optional<FoundPolicy>>>();
      e->answers_as_bound_ = answers;
      const PolicyLookup recorded = [&lookup, answers](const OpSpec& op) -> std::optional<FoundPolicy> {
        std::optional<FoundPolicy> found = lookup ? lookup(op) : std::nullopt;
        answers->insert_or_assign(op.canonical.text, found);
        return found;
      };
      TB_RETURN_IF_ERROR(e->Bind(recorded, fusion));
    }
    clock.Lap(options.phases ? &options.phases->bind : nullptr);
    TB_RETURN_IF_ERROR(e->HandOverLayouts());
    TB_RETURN_IF_ERROR(e->PlanSideBySide(options.branches));
  }
  e->not_float32_.resize(e->graph_.values.size());
  for (size_t v = 0; v < e->graph_.values.size(); ++v) e->not_float32_[v] = e->graph_.values[v].dtype != "float32";
  // Float copies of the constants that steps read from memory (direct kernels hold their own), and
  // TypedTensors of the constants' own types for kRegistry steps.
  const size_t values = e->graph_.values.size();
  std::vector<bool> wants_float(values, false), wants_typed(values, false);
  auto want = [&](int v, bool typed) {
    if (v >= 0 && e->graph_.IsConstant(v)) (typed ? wants_typed : wants_float)[v] = true;
  };
  for (const auto& s : e->steps_) {
    if (s->kind == Step::Kind::kDirect) continue;
    for (int v : s->inputs) want(v, s->kind == Step::Kind::kRegistry || e->ReadsTyped(*s, v));
  }
  for (int v : e->graph_.outputs) want(v, e->graph_.values[v].dtype != "float32");
  e->constant_data_.resize(values);
  e->typed_.resize(values);
  // run_only_: each weight is released as soon as its copies are made, so that the next one's copy
  // reuses its memory (the weights are held twice for one tensor at a time, not for the whole model).
  std::vector<bool> copied(values, false);
  auto copy_constant = [&](size_t v) {
    if (copied[v]) return;
    copied[v] = true;
    const Value& value = e->graph_.values[v];
    if (wants_float[v]) e->constant_data_[v] = value.constant->AsTensor().data;
    if (wants_typed[v]) e->typed_[v] = value.constant->AsTyped(ParseDType(value.dtype).value_or(DType::kFloat32));
    if (e->run_only_) e->ReleaseWeight(static_cast<int>(v));
  };
  if (e->run_only_) {
    e->typed_readers_.assign(values, 0);
    for (const auto& s : e->steps_)
      for (int v : s->inputs)
        if (v >= 0 && e->graph_.IsConstant(v)) ++e->typed_readers_[v];
    for (int v : e->graph_.outputs) ++e->typed_readers_[v];  // never freed
    // Registry kernels that pack their weights take them now, step by step, each typed copy freed
    // once its kernel holds its own: a 3-D CNN's weights are held once, not twice, after its load.
    // The heap keeps large blocks while loading (KeepLargeBlocksInTheHeap): after every kTrimBytes of
    // weights copied (their graph copies and typed copies freed as the kernels pack them) the free
    // pages go back, or a 3-D ResNet-18's load peaked 50 MiB over what it holds.
    constexpr size_t kTrimBytes = 16 << 20;
    size_t copied_bytes = 0;
    for (const auto& s : e->steps_) {
      if (s->kind != Step::Kind::kRegistry) continue;
      bool reads_constant = false;
      for (int v : s->inputs)
        if (v >= 0 && e->graph_.IsConstant(v)) {
          if (const auto& c = e->graph_.values[v].constant; !copied[v] && c)
            copied_bytes += c->floats.size() * sizeof(float) + c->ints.size() * sizeof(int64_t) + c->bytes.size();
          copy_constant(static_cast<size_t>(v));
          reads_constant = true;
        }
      if (reads_constant) e->PrepareRegistryStepAhead(*s);
      if (copied_bytes >= kTrimBytes) {
        ReturnFreeHeapPages();
        copied_bytes = 0;
      }
    }
  }
  for (size_t v = 0; v < values; ++v) copy_constant(v);
  for (size_t v = 0; v < e->graph_.values.size(); ++v)
    if (e->graph_.values[v].constant) e->constant_bytes_ += e->graph_.values[v].constant->size() * sizeof(float);
  e->PlanMemory();
  e->PlanTypedSlots();
  const uint64_t needed = e->arena_bytes() + e->constant_bytes_;
  if (needed > AvailableMemoryBytes())
    return Status::InvalidInput("the model needs about " + std::to_string(needed >> 20) + " MiB for its tensors and weights; this machine has " +
                                std::to_string(AvailableMemoryBytes() >> 20) + " MiB available");
  ReturnFreeHeapPages();  // what binding freed (the graph's weights, the bind's scratch)
  // Page-aligned (the plan's offsets are 64-byte aligned) and zero, the pages faulted in by the first
  // run (engine/core/zeroed_pages.h).
  e->arena_block_ = ZeroedPages(static_cast<size_t>(e->arena_floats_) * sizeof(float));
  if (!e->arena_block_.data())
    return Status::IoError("cannot allocate " + std::to_string(e->arena_bytes() >> 20) + " MiB for the model's tensors");
  e->arena_ = static_cast<float*>(e->arena_block_.data());
  KeepLargeBlocksInTheHeap();  // the runs reuse the blocks they free
  clock.Lap(options.phases ? &options.phases->finish : nullptr);
  return e;
}

uint64_t Executor::typed_constant_bytes() const {
  uint64_t bytes = 0;
  for (size_t v = 0; v < typed_.size(); ++v)
    if (graph_.IsConstant(static_cast<int>(v))) bytes += typed_[v].bytes.size();
  return bytes;
}

void Executor::ReleaseWeight(int v) {
  std::optional<ConstTensor>& c = graph_.values[v].constant;
  if (!c || (c->type == ConstTensor::Type::kFloat ? c->floats.size() * sizeof(float) < kReleasedWeightBytes
                                                  : static_cast<size_t>(c->size()) * sizeof(int64_t) < kReleasedIntegerWeightBytes))
    return;
  if (std::find(graph_.outputs.begin(), graph_.outputs.end(), v) != graph_.outputs.end()) return;
  c->released_uniform = c->Uniform();
  released_since_trim_ += c->floats.size() * sizeof(float) + c->ints.size() * sizeof(int64_t) + c->bytes.size();
  std::vector<float>().swap(c->floats);
  std::vector<int64_t>().swap(c->ints);
  std::vector<uint8_t>().swap(c->bytes);
  weights_released_ = true;
  // The freed pages go back every kTrimBytes: a block below glibc's mmap threshold (which rises to
  // 32 MiB as large blocks are freed) stays resident in the heap, and the kernels' packed copies made
  // while the rest of the graph's weights are still held would peak at about both (a Tacotron-2
  // decoder step's 73 MB of LSTM weights: 162 MiB).
  constexpr size_t kTrimBytes = 16 << 20;
  if (released_since_trim_ >= kTrimBytes) {
    ReturnFreeHeapPages();
    released_since_trim_ = 0;
  }
}

Status Executor::RunStep(Step& s, const std::vector<const float*>& in, float* out) {
  switch (s.kind) {
    case Step::Kind::kAlias: break;
    case Step::Kind::kArena:
      s.arena->run(in, out);
      if (s.arena->verdict) return s.arena->verdict();
      break;
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
  return FastestOf(5, 1, [&] { return RunStep(s, in, out.data()).ok(); });
}

void Executor::CountHoldings(Step& s) {
  if (!run_only_ || s.holdings_counted) return;
  s.holdings_counted = true;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const int v = s.inputs[k];
    if (v >= 0 && graph_.IsConstant(v) && s.op->HoldsConstantInput(static_cast<int>(k)) && --typed_readers_[v] == 0)
      std::vector<std::byte>().swap(typed_[v].bytes);
  }
}

void Executor::PrepareRegistryStepAhead(Step& s) {
  std::vector<TypedTensor> shapes(s.inputs.size());  // the run-time inputs' dtypes and shapes, no elements
  kernels::KernelInputs in;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const int v = s.inputs[k];
    if (v < 0) {
      in.push_back(nullptr);
      continue;
    }
    if (graph_.IsConstant(v)) {
      in.push_back(&typed_[v]);
      continue;
    }
    const Value& value = graph_.values[v];
    if (value.kind != ValueKind::kTensor || !value.shape_known) return;  // known at run time only
    shapes[k].dtype = ParseDType(value.dtype).value_or(DType::kUndefined);
    shapes[k].shape = value.shape;
    in.push_back(&shapes[k]);
  }
  s.op->PrepareAhead(in);
  // Counted now only where it holds something: otherwise its first Compute may still pack.
  for (size_t k = 0; k < s.inputs.size(); ++k)
    if (s.inputs[k] >= 0 && graph_.IsConstant(s.inputs[k]) && s.op->HoldsConstantInput(static_cast<int>(k))) {
      CountHoldings(s);
      return;
    }
}

namespace {

// The typed tensors registry steps take their arena inputs in and give their arena outputs from,
// shared by every step run on this thread: one per input or output position, as large as the largest
// step has needed, rather than each step holding its own pair between runs (a 3-D ResNet-18's 21
// registry steps held 28 MB of them) or one per position and byte size (SlowFast's 3-D convolutions
// of many sizes held 18.7 MB: 59 -> 56 MiB peak with one per position; a step larger than the last
// clears only its growth, within the spread of SlowFast's and R3D-18's latency).
// Kept until the thread ends, as engine/backends/onednn/call_scratch.h's room is.
TypedTensor& RegistryBuffer(bool output, size_t position) {
  thread_local std::map<std::pair<bool, size_t>, TypedTensor> buffers;
  return buffers[{output, position}];
}

}  // namespace

Status Executor::RunRegistryStep(Step& s) {
  if (OnArenaBuffers(s)) {  // a kernel that computes over the arena's buffers, when it can
    std::vector<const float*> buffers;
    for (int v : s.inputs) buffers.push_back(v < 0 || graph_.IsConstant(v) ? nullptr : Address(v));
    if (s.op->ComputeOnBuffers(buffers, Address(s.outputs[0]))) return Status::Ok();
  }
  kernels::KernelInputs in;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const int v = s.inputs[k];
    if (v < 0) {
      in.push_back(nullptr);
    } else if (InArena(v)) {
      const std::vector<int64_t>& shape = graph_.values[v].shape;
      TypedTensor& copy = RegistryBuffer(false, k);
      ReshapeForOverwrite(&copy, DType::kFloat32, shape);
      CopyOnThreads(copy.bytes.data(), Address(v), copy.bytes.size());
      in.push_back(&copy);
    } else {
      in.push_back(&typed_[v]);
    }
  }
  // Each output starts as last run's tensor: a kernel that writes its output over the memory it is
  // given (ReshapeForOverwrite) allocates nothing.
  auto arena_output = [&](size_t k) -> TypedTensor& {
    return RegistryBuffer(true, k);
  };
  std::vector<TypedTensor> results(s.outputs.size());
  for (size_t k = 0; k < s.outputs.size(); ++k)
    if (const int v = s.outputs[k]; v >= 0) {
      const int slot = static_cast<size_t>(v) < typed_slot_of_.size() ? typed_slot_of_[v] : -1;
      results[k] = std::move(InArena(v) ? arena_output(k) : slot >= 0 ? typed_slots_[static_cast<size_t>(slot)] : typed_[v]);
    }
  TB_RETURN_IF_ERROR(s.op->Compute(in, &results));
  CountHoldings(s);
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    const int v = s.outputs[k];
    if (v < 0) continue;
    const Value& value = graph_.values[v];
    if (results[k].kind != value.kind)
      return Status::InvalidInput("output '" + value.name + "' came out a " + ValueKindName(results[k].kind) + "; the model declares a " +
                                  ValueKindName(value.kind));
    if (value.kind == ValueKind::kTensor && results[k].dtype != ParseDType(value.dtype).value_or(DType::kUndefined))
      return Status::InvalidInput("output '" + value.name + "' came out " + DTypeName(results[k].dtype) + "; the model declares " + value.dtype);
    if (!InArena(v)) {
      typed_[v] = std::move(results[k]);
      continue;
    }
    if (results[k].shape != value.shape)
      return Status::InvalidInput("output '" + value.name + "' came out " + ShapeText(results[k].shape) + "; shape inference said " +
                                  ShapeText(value.shape));
    CopyOnThreads(Address(v), results[k].bytes.data(), results[k].bytes.size());
    arena_output(k) = std::move(results[k]);
  }
  return Status::Ok();
}

bool Executor::OnArenaBuffers(const Step& s) const {
  if (s.outputs.size() != 1 || !InArena(s.outputs[0])) return false;
  for (int v : s.inputs)
    if (v >= 0 && !graph_.IsConstant(v) && !InArena(v)) return false;
  return true;
}

Status Executor::RunOneStep(size_t i, std::vector<const float*>* in, std::vector<double>* node_us) {
  Step& s = *steps_[i];
  const auto start = node_us ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (s.kind == Step::Kind::kRegistry) {
    if (Status ran = RunRegistryStep(s); !ran.ok()) return ran.WithContext("node '" + bindings_[i].name + "'");  // the name only on failure
  } else {
    in->clear();
    for (int v : s.inputs) {
      // An arena kernel reads a typed value (indices, a condition) at the shape the graph inferred
      // for it: one computed at run time must have come out so.
      if (ReadsTyped(s, v) && !graph_.IsConstant(v) && typed_[v].shape != graph_.values[v].shape)
        return Status::InvalidInput("node '" + bindings_[i].name + "': input '" + graph_.values[v].name + "' came out " + ShapeText(typed_[v].shape) +
                                    "; shape inference said " + ShapeText(graph_.values[v].shape));
      in->push_back(s.kind == Step::Kind::kDirect && graph_.IsConstant(v) ? nullptr : StepInput(s, v));
    }
    if (Status ran = RunStep(s, *in, Address(s.output)); !ran.ok()) return ran.WithContext("node '" + bindings_[i].name + "'");
  }
  if (node_us) (*node_us)[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

Status Executor::RunSteps(std::vector<double>* node_us) {
  if (node_us) node_us->assign(steps_.size(), 0.0);
  std::vector<const float*> in;
  auto section = side_by_side_.begin();
  for (size_t i = 0; i < steps_.size();) {
    if (section != side_by_side_.end() && section->begin == i) {
      TB_RETURN_IF_ERROR(RunSideBySide(*section, node_us));
      for (size_t k = section->begin; k < section->end; ++k) ReleaseTypedAfter(k);
      i = section->end;
      ++section;
      continue;
    }
    TB_RETURN_IF_ERROR(RunOneStep(i, &in, node_us));
    ReleaseTypedAfter(i);
    ++i;
  }
  return Status::Ok();
}

Status Executor::Run(const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs, std::vector<double>* node_us) {
  if (inputs.size() != graph_.inputs.size())
    return Status::InvalidInput("the model takes " + std::to_string(graph_.inputs.size()) + " inputs, not " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph_.values[graph_.inputs[i]];
    if (v.kind != ValueKind::kTensor || v.dtype != "float32")
      return Status::InvalidInput("input '" + v.name + "' is " + (v.kind != ValueKind::kTensor ? std::string("a ") + ValueKindName(v.kind) : v.dtype) +
                                  ": run the model with typed values");
    if (inputs[i]->shape != v.shape)
      return Status::InvalidInput("input '" + v.name + "' has shape " + ShapeText(inputs[i]->shape) + "; the model takes " + ShapeText(v.shape));
    std::copy(inputs[i]->data.begin(), inputs[i]->data.end(), Address(graph_.inputs[i]));
  }
  TB_RETURN_IF_ERROR(RunSteps(node_us));
  outputs->clear();
  for (int v : graph_.outputs) {
    if (graph_.values[v].kind != ValueKind::kTensor || graph_.values[v].dtype != "float32")
      return Status::InvalidInput("output '" + graph_.values[v].name + "' is not a float32 tensor: run the model with typed values");
    // In the arena, or (a registry kernel's output, of a shape known per run; a constant) held typed.
    TypedTensor constant;
    const TypedTensor* held = nullptr;
    if (!InArena(v)) {
      if (graph_.IsConstant(v)) constant = graph_.values[v].constant->AsTyped(DType::kFloat32);
      held = graph_.IsConstant(v) ? &constant : &typed_[v];
      if (held->dtype != DType::kFloat32 || !held->IsTensor()) return Status::InvalidInput("output '" + graph_.values[v].name + "' is not computed");
    }
    Tensor t(held ? held->shape : graph_.values[v].shape);
    const float* data = held ? held->data<float>() : Address(v);
    std::copy(data, data + t.size(), t.data.begin());
    outputs->push_back(std::move(t));
  }
  return Status::Ok();
}

Status Executor::Run(const std::vector<const TypedTensor*>& inputs, std::vector<TypedTensor>* outputs, std::vector<double>* node_us) {
  if (inputs.size() != graph_.inputs.size())
    return Status::InvalidInput("the model takes " + std::to_string(graph_.inputs.size()) + " inputs, not " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int id = graph_.inputs[i];
    const Value& v = graph_.values[id];
    if (inputs[i]->kind != v.kind)
      return Status::InvalidInput("input '" + v.name + "' is a " + ValueKindName(inputs[i]->kind) + "; the model takes a " + ValueKindName(v.kind));
    if (v.kind != ValueKind::kTensor) {  // a sequence or optional: its kernels check its elements
      typed_[id] = *inputs[i];
      continue;
    }
    if (DTypeName(inputs[i]->dtype) != v.dtype)
      return Status::InvalidInput("input '" + v.name + "' is " + DTypeName(inputs[i]->dtype) + "; the model takes " + v.dtype);
    if (inputs[i]->shape != v.shape)
      return Status::InvalidInput("input '" + v.name + "' has shape " + ShapeText(inputs[i]->shape) + "; the model takes " + ShapeText(v.shape));
    if (InArena(id)) std::memcpy(Address(id), inputs[i]->bytes.data(), inputs[i]->bytes.size());
    else typed_[id] = *inputs[i];
  }
  TB_RETURN_IF_ERROR(RunSteps(node_us));
  outputs->clear();
  for (int v : graph_.outputs) {
    const Value& value = graph_.values[v];
    if (InArena(v)) {
      TypedTensor t(DType::kFloat32, value.shape);
      std::memcpy(t.bytes.data(), Address(v), t.bytes.size());
      outputs->push_back(std::move(t));
    } else if (graph_.IsConstant(v)) {
      outputs->push_back(value.constant->AsTyped(ParseDType(value.dtype).value_or(DType::kFloat32)));
    } else {
      outputs->push_back(typed_[v]);
    }
  }
  return Status::Ok();
}

PolicyLookup Executor::LookupAsBound() const {
  std::shared_ptr<const std::map<std::string, std::optional<FoundPolicy>>> answers = answers_as_bound_;
  return [answers](const OpSpec& op) -> std::optional<FoundPolicy> {
    if (!answers) return std::nullopt;
    auto it = answers->find(op.canonical.text);
    return it == answers->end() ? std::nullopt : it->second;
  };
}

}  // namespace tilebank::engine::model

