#include "engine/quantize/static_quantizer.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "engine/runtime/model_session.h"
#include "engine/ir/onnx_import.h"
#include "engine/ir/tensor_proto.h"

namespace tilebank::engine::quantize {

namespace {

namespace fs = std::filesystem;
using model::ConstTensor;

// The calibration input sets: `dir` itself when it holds input_0.pb, else its subdirectories that do.
Result<std::vector<std::string>> CalibrationSets(const std::string& dir, size_t max) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("--calibrate " + dir + ": no such directory");
  if (fs::exists(dir + "/input_0.pb", ec)) return std::vector<std::string>{dir};
  std::vector<std::string> sets;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "input_0.pb", ec)) sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  if (sets.size() > max) sets.resize(max);
  if (sets.empty()) return Status::InvalidInput("--calibrate " + dir + ": no input_0.pb in it or in a subdirectory (ONNX test data: test_data_set_*/input_<i>.pb)");
  return sets;
}

struct Proto {
  onnx::ModelProto model;
  std::map<std::string, int> initializer;  // name -> index
  void Index() {
    initializer.clear();
    for (int i = 0; i < model.graph().initializer_size(); ++i) initializer[model.graph().initializer(i).name()] = i;
  }
  const onnx::TensorProto* Init(const std::string& name) const {
    auto it = initializer.find(name);
    return it == initializer.end() ? nullptr : &model.graph().initializer(it->second);
  }
  std::vector<int> Readers(const std::string& value) const {
    std::vector<int> r;
    for (int i = 0; i < model.graph().node_size(); ++i)
      for (const auto& in : model.graph().node(i).input())
        if (in == value) {
          r.push_back(i);
          break;
        }
    return r;
  }
  bool IsGraphOutput(const std::string& value) const {
    for (const auto& o : model.graph().output())
      if (o.name() == value) return true;
    return false;
  }
};

int64_t IntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}
float FloatAttr(const onnx::NodeProto& n, const std::string& name, float fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}

Status ReplaceInitializer(Proto* p, const std::string& name, const ConstTensor& c, const std::string& dtype) {
  auto proto = model::ProtoFromConst(name, c, dtype);
  if (!proto.ok()) return proto.status();
  auto it = p->initializer.find(name);
  if (it == p->initializer.end()) {
    *p->model.mutable_graph()->add_initializer() = std::move(*proto);
    p->Index();
  } else {
    *p->model.mutable_graph()->mutable_initializer(it->second) = std::move(*proto);
  }
  return Status::Ok();
}

// Conv -> BatchNormalization (inference, constant parameters, the Conv's only reader): the
// normalization folded into the Conv's weights and bias, the BatchNormalization removed.
Result<size_t> FoldBatchNorms(Proto* p) {
  size_t folded = 0;
  auto* graph = p->model.mutable_graph();
  for (int bi = 0; bi < graph->node_size(); ++bi) {
    const onnx::NodeProto bn = graph->node(bi);
    if (bn.op_type() != "BatchNormalization" || bn.input_size() < 5 || bn.output_size() < 1) continue;
    int ci = -1;
    for (int i = 0; i < graph->node_size(); ++i)
      if (graph->node(i).op_type() == "Conv" && graph->node(i).output(0) == bn.input(0)) ci = i;
    if (ci < 0 || p->Readers(bn.input(0)).size() != 1 || p->IsGraphOutput(bn.input(0))) continue;
    onnx::NodeProto& conv = *graph->mutable_node(ci);
    const onnx::TensorProto* w = p->Init(conv.input(1));
    const onnx::TensorProto *scale = p->Init(bn.input(1)), *shift = p->Init(bn.input(2)), *mean = p->Init(bn.input(3)), *var = p->Init(bn.input(4));
    if (!w || !scale || !shift || !mean || !var) continue;
    auto W = model::ConstFromProto(*w);
    auto S = model::ConstFromProto(*scale), B = model::ConstFromProto(*shift), M = model::ConstFromProto(*mean), V = model::ConstFromProto(*var);
    if (!W.ok() || !S.ok() || !B.ok() || !M.ok() || !V.ok() || W->type != ConstTensor::Type::kFloat || W->shape.empty()) continue;
    const int64_t out = W->shape[0], per = W->size() / out;
    std::vector<float> bias(static_cast<size_t>(out), 0.0f);
    if (conv.input_size() > 2 && !conv.input(2).empty()) {
      const onnx::TensorProto* b = p->Init(conv.input(2));
      if (!b) continue;
      auto Bc = model::ConstFromProto(*b);
      if (!Bc.ok()) continue;
      for (int64_t m = 0; m < out; ++m) bias[m] = static_cast<float>(Bc->At(m));
    }
    const float eps = FloatAttr(bn, "epsilon", 1e-5f);
    std::vector<float> weights = W->floats;
    for (int64_t m = 0; m < out; ++m) {
      const double k = S->At(m) / std::sqrt(V->At(m) + eps);
      for (int64_t j = 0; j < per; ++j) weights[m * per + j] = static_cast<float>(weights[m * per + j] * k);
      bias[m] = static_cast<float>((bias[m] - M->At(m)) * k + B->At(m));
    }
    const std::string w_name = conv.input(1) + "_bn_folded", b_name = conv.output(0) + "_bn_bias";
    TB_RETURN_IF_ERROR(ReplaceInitializer(p, w_name, ConstTensor::Floats(W->shape, weights), "float32"));
    TB_RETURN_IF_ERROR(ReplaceInitializer(p, b_name, ConstTensor::Floats({out}, bias), "float32"));
    conv.set_input(1, w_name);
    if (conv.input_size() > 2) conv.set_input(2, b_name);
    else conv.add_input(b_name);
    conv.set_output(0, bn.output(0));
    graph->mutable_node()->DeleteSubrange(bi, 1);
    --bi;
    ++folded;
  }
  return folded;
}

// An operator quantized: its node, the weight input's index and the channel axis of its weights.
struct Target {
  std::string node_name;
  int weight_input = 1;
  int64_t channel_axis = 0;
  std::string activation;  // its input that is quantized
  std::string output;      // the value after it to quantize (past a Relu or a bias Add)
};

std::vector<Target> Targets(Proto* p) {
  std::vector<Target> targets;
  auto* graph = p->model.mutable_graph();
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto& n = *graph->mutable_node(i);
    if (n.name().empty()) n.set_name(n.op_type() + "_" + std::to_string(i));
    Target t;
    t.node_name = n.name();
    if (n.input_size() < 2) continue;
    const onnx::TensorProto* w = p->Init(n.input(1));
    if (!w || w->data_type() != onnx::TensorProto::FLOAT || p->Init(n.input(0))) continue;
    if (n.op_type() == "Conv" && w->dims_size() >= 3) {
      t.channel_axis = 0;
    } else if (n.op_type() == "MatMul" && w->dims_size() == 2) {
      t.channel_axis = 1;
    } else if (n.op_type() == "Gemm" && w->dims_size() == 2 && IntAttr(n, "transA", 0) == 0 && FloatAttr(n, "alpha", 1) == 1 && FloatAttr(n, "beta", 1) == 1) {
      t.channel_axis = IntAttr(n, "transB", 0) ? 0 : 1;
    } else {
      continue;
    }
    t.activation = n.input(0);
    t.output = n.output(0);
    // Past a bias Add (MatMul) and a Relu or Clip (ReLU6), when each is the only reader.
    for (const char* next : {"Add", "Relu"}) {
      const auto readers = p->Readers(t.output);
      if (readers.size() != 1 || p->IsGraphOutput(t.output)) break;
      const onnx::NodeProto& r = graph->node(readers[0]);
      if (r.op_type() != next && !(std::string(next) == "Relu" && r.op_type() == "Clip")) continue;
      if (r.op_type() == "Add" && (n.op_type() != "MatMul" || r.input_size() != 2 || !(p->Init(r.input(0)) || p->Init(r.input(1))))) continue;
      t.output = r.output(0);
    }
    targets.push_back(t);
  }
  return targets;
}

// The float model with `values` added to its outputs, written to a temporary file and loaded.
Result<std::unique_ptr<model::Executor>> LoadWithOutputs(const Proto& p, const std::vector<std::string>& values, const std::string& temp) {
  onnx::ModelProto m = p.model;
  // The values' types (with their ranks) from ONNX's shape inference: the checker wants them on outputs.
  std::map<std::string, onnx::TypeProto> types;
  try {
    onnx::ModelProto inferred = m;
    onnx::shape_inference::InferShapes(inferred);
    for (const auto& v : inferred.graph().value_info()) types[v.name()] = v.type();
    for (const auto& v : inferred.graph().input()) types[v.name()] = v.type();
  } catch (const std::exception& e) {
    return Status::InvalidInput("shape inference failed: " + std::string(e.what()));
  }
  std::set<std::string> present;
  for (const auto& o : m.graph().output()) present.insert(o.name());
  for (const auto& v : values)
    if (!present.count(v)) {
      auto it = types.find(v);
      if (it == types.end()) return Status::InvalidInput("the type of " + v + " is not known (ONNX's shape inference left it out)");
      auto* out = m.mutable_graph()->add_output();
      out->set_name(v);
      *out->mutable_type() = it->second;
    }
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f || !m.SerializeToOstream(&f)) return Status::IoError("cannot write " + temp);
  }
  auto loaded = model::LoadModel(temp, {}, nullptr);
  std::error_code ec;
  fs::remove(temp, ec);
  return loaded;
}

// The outputs of every input set (`sets` empty: of 4 random input sets, the same for every model).
Result<std::vector<std::vector<TypedTensor>>> RunAll(model::Executor& ex, const std::vector<std::string>& sets) {
  std::vector<std::vector<TypedTensor>> all;
  const size_t count = sets.empty() ? 4 : sets.size();
  for (size_t k = 0; k < count; ++k) {
    auto inputs = sets.empty() ? Result<std::vector<TypedTensor>>(model::RandomTypedInputs(ex.graph(), k + 1)) : model::ReadTypedInputs(ex.graph(), sets[k]);
    if (!inputs.ok()) return inputs.status().WithContext("--calibrate");
    std::vector<const TypedTensor*> in;
    for (const auto& t : *inputs) in.push_back(&t);
    std::vector<TypedTensor> out;
    TB_RETURN_IF_ERROR(ex.Run(in, &out));
    all.push_back(std::move(out));
  }
  return all;
}

std::string Inserted(const std::string& value, const char* what) { return value + "_" + what; }

bool IsConv(const Proto& p, const Target& t) {
  for (const auto& n : p.model.graph().node())
    if (n.name() == t.node_name) return n.op_type() == "Conv";
  return false;
}

onnx::NodeProto NewNode(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(out.front());
  for (const auto& i : in) n.add_input(i);
  for (const auto& o : out) n.add_output(o);
  return n;
}

// Dynamic quantization of each MatMul / Gemm in `targets`: y = (MatMulInteger(x_q, W_q, x_zero) as
// float) * x_scale * w_scale[n] (+ Gemm's C), x_q from DynamicQuantizeLinear, W_q int8 [K, N] per
// column. The original nodes are removed; their outputs keep their names.
Status RewriteDynamic(Proto* p, const std::vector<Target>& targets, std::vector<onnx::NodeProto>* added, QuantizeReport* report) {
  auto* g = p->model.mutable_graph();
  std::map<std::string, std::string> quantized;  // activation -> its DynamicQuantizeLinear's name prefix
  std::set<std::string> removed;
  for (const Target& t : targets) {
    int ni = 0;
    while (g->node(ni).name() != t.node_name) ++ni;
    const onnx::NodeProto n = g->node(ni);
    const bool gemm = n.op_type() == "Gemm", trans_b = gemm && IntAttr(n, "transB", 0) != 0;
    auto W = model::ConstFromProto(*p->Init(n.input(1)));
    if (!W.ok()) return W.status();
    const int64_t K = trans_b ? W->shape[1] : W->shape[0], N = trans_b ? W->shape[0] : W->shape[1];
    auto at = [&](int64_t k, int64_t c) { return trans_b ? W->At(c * K + k) : W->At(k * N + c); };
    std::vector<float> scales(static_cast<size_t>(N), 1.0f);
    for (int64_t c = 0; c < N; ++c) {
      double m = 0;
      for (int64_t k = 0; k < K; ++k) m = std::max(m, std::fabs(at(k, c)));
      if (m > 0) scales[c] = static_cast<float>(m / 127.0);
    }
    std::vector<int64_t> q(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t c = 0; c < N; ++c) q[k * N + c] = static_cast<int64_t>(std::clamp(std::nearbyint(at(k, c) / scales[c]), -127.0, 127.0));
    const std::string base = n.input(1), wq = Inserted(base, "int8_kn"), ws = Inserted(base, "scale");
    TB_RETURN_IF_ERROR(ReplaceInitializer(p, wq, ConstTensor::Ints({K, N}, std::move(q)), "int8"));
    TB_RETURN_IF_ERROR(ReplaceInitializer(p, ws, ConstTensor::Floats({N}, scales), "float32"));
    const std::string x = n.input(0);
    if (!quantized.count(x)) {
      quantized[x] = Inserted(x, "dynamic");
      added->push_back(NewNode("DynamicQuantizeLinear", {x}, {quantized[x] + "_q", quantized[x] + "_scale", quantized[x] + "_zero_point"}));
    }
    const std::string xq = quantized[x], y = n.output(0), stem = Inserted(y, "int");
    added->push_back(NewNode("MatMulInteger", {xq + "_q", wq, xq + "_zero_point"}, {stem + "32"}));
    onnx::NodeProto cast = NewNode("Cast", {stem + "32"}, {stem + "_float"});
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    added->push_back(cast);
    added->push_back(NewNode("Mul", {stem + "_float", xq + "_scale"}, {stem + "_x_scaled"}));
    const bool bias = gemm && n.input_size() > 2 && !n.input(2).empty();
    added->push_back(NewNode("Mul", {stem + "_x_scaled", ws}, {bias ? stem + "_no_bias" : y}));
    if (bias) added->push_back(NewNode("Add", {stem + "_no_bias", n.input(2)}, {y}));
    removed.insert(t.node_name);
    ++report->quantized_ops;
  }
  for (int i = g->node_size() - 1; i >= 0; --i)
    if (removed.count(g->node(i).name())) g->mutable_node()->DeleteSubrange(i, 1);
  return Status::Ok();
}

}  // namespace

Result<QuantizeReport> QuantizeModel(const QuantizeOptions& o) {
  Proto p;
  TB_RETURN_IF_ERROR(model::ReadOnnxModel(o.model_path, &p.model));
  p.Index();
  auto sets = o.dynamic && o.calibrate_dir.empty() ? Result<std::vector<std::string>>(std::vector<std::string>{})
                                                   : CalibrationSets(o.calibrate_dir, o.max_samples);
  if (!sets.ok()) return sets.status();
  QuantizeReport report;
  report.samples = sets->size();
  auto folded = FoldBatchNorms(&p);
  if (!folded.ok()) return folded.status();
  report.folded_batchnorms = *folded;
  std::vector<Target> targets = Targets(&p);
  if (o.dynamic)  // Conv stays float: dynamic quantization is for MatMul-heavy models
    targets.erase(std::remove_if(targets.begin(), targets.end(), [&](const Target& t) { return t.channel_axis == 0 && t.weight_input == 1 && IsConv(p, t); }),
                  targets.end());
  if (targets.empty())
    return Status::InvalidInput(o.model_path + " has no " + (o.dynamic ? "MatMul or Gemm" : "Conv, MatMul or Gemm") + " with constant float weights to quantize");

  // Calibration: the float model's activations over every input set, twice (min/max, then histograms).
  std::vector<std::string> tensors;
  for (const auto& t : targets)
    for (const std::string& v : {t.activation, t.output})
      if (!o.dynamic && std::find(tensors.begin(), tensors.end(), v) == tensors.end()) tensors.push_back(v);
  const std::string temp = fs::temp_directory_path() / ("tilebank_calibrate_" + std::to_string(getpid()) + ".onnx");
  auto ex = LoadWithOutputs(p, tensors, temp);
  if (!ex.ok()) return ex.status().WithContext(o.model_path);
  const auto& graph = (*ex)->graph();
  std::map<std::string, size_t> output_index;
  for (size_t i = 0; i < graph.outputs.size(); ++i) output_index[graph.values[graph.outputs[i]].name] = i;
  auto runs = RunAll(**ex, *sets);
  if (!runs.ok()) return runs.status();
  std::map<std::string, Range> ranges;
  for (const auto& name : tensors) {
    const size_t i = output_index.at(name);
    double low = 0, high = 0;
    for (const auto& run : *runs) {
      const TypedTensor& t = run[i];
      if (t.dtype != DType::kFloat32) return Status::InvalidInput(name + " is " + DTypeName(t.dtype) + ", not float32: it cannot be quantized");
      for (int64_t k = 0; k < t.size(); ++k) low = std::min(low, static_cast<double>(t.data<float>()[k])), high = std::max(high, static_cast<double>(t.data<float>()[k]));
    }
    Histogram h(low, high);
    for (const auto& run : *runs) h.Add(run[i].data<float>(), static_cast<size_t>(run[i].size()));
    ranges[name] = ChooseRange(h, o.method);
    report.ranges_by_method[RangeMethodName(ranges[name].method)]++;
  }
  // A tensor that a MaxPool, Flatten or Reshape makes of a quantized one keeps that one's range (they
  // move values without changing them), so the pair of Q/DQ around them cancels and a runtime runs
  // them on the 8-bit tensor, as ONNX Runtime's quantizer arranges it too.
  for (auto& [name, range] : ranges) {
    for (const auto& n : p.model.graph().node()) {
      if (n.output_size() < 1 || n.output(0) != name || n.input_size() < 1) continue;
      if (n.op_type() != "MaxPool" && n.op_type() != "Flatten" && n.op_type() != "Reshape") continue;
      auto in = ranges.find(n.input(0));
      if (in != ranges.end()) range = in->second;
    }
  }
  std::vector<std::vector<TypedTensor>> reference;  // the float model's own outputs, for the SQNR
  const size_t model_outputs = static_cast<size_t>(p.model.graph().output_size());
  for (auto& run : *runs) reference.push_back(std::vector<TypedTensor>(run.begin(), run.begin() + static_cast<long>(model_outputs)));

  // The QDQ model: weights as int8 per channel behind DequantizeLinear, activations through Q/DQ pairs.
  auto* g = p.model.mutable_graph();
  auto add_node = [&](const std::string& op, std::vector<std::string> in, const std::string& out, int64_t axis = -1) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(out);
    for (auto& i : in) n.add_input(i);
    n.add_output(out);
    if (axis >= 0) {
      auto* a = n.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
    return n;
  };
  std::vector<onnx::NodeProto> added;
  std::map<std::string, std::string> dequantized;  // activation -> its DequantizeLinear output
  auto quantize_activation = [&](const std::string& value) -> Status {
    if (dequantized.count(value)) return Status::Ok();
    const Range& r = ranges.at(value);
    const double scale = std::max((r.high - r.low) / 255.0, 1e-12);
    const int64_t zero = static_cast<int64_t>(std::clamp(std::nearbyint(-r.low / scale), 0.0, 255.0));
    const std::string s = Inserted(value, "scale"), z = Inserted(value, "zero_point");
    TB_RETURN_IF_ERROR(ReplaceInitializer(&p, s, ConstTensor::Floats({}, {static_cast<float>(scale)}), "float32"));
    TB_RETURN_IF_ERROR(ReplaceInitializer(&p, z, ConstTensor::Ints({}, {zero}), "uint8"));
    added.push_back(add_node("QuantizeLinear", {value, s, z}, Inserted(value, "quantized")));
    added.push_back(add_node("DequantizeLinear", {Inserted(value, "quantized"), s, z}, Inserted(value, "dequantized")));
    dequantized[value] = Inserted(value, "dequantized");
    return Status::Ok();
  };
  if (o.dynamic) TB_RETURN_IF_ERROR(RewriteDynamic(&p, targets, &added, &report));
  for (const Target& t : targets) {
    if (o.dynamic) break;
    TB_RETURN_IF_ERROR(quantize_activation(t.activation));
    TB_RETURN_IF_ERROR(quantize_activation(t.output));
  }
  // Weights: int8, symmetric, one scale per output channel.
  for (const Target& t : targets) {
    if (o.dynamic) break;
    int ni = 0;
    while (g->node(ni).name() != t.node_name) ++ni;
    onnx::NodeProto& n = *g->mutable_node(ni);
    auto W = model::ConstFromProto(*p.Init(n.input(t.weight_input)));
    if (!W.ok()) return W.status();
    const int64_t channels = W->shape[t.channel_axis];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(t.channel_axis) + 1; d < W->shape.size(); ++d) inner *= W->shape[d];
    std::vector<double> absmax(static_cast<size_t>(channels), 0.0);
    for (int64_t k = 0; k < W->size(); ++k) absmax[k / inner % channels] = std::max(absmax[k / inner % channels], std::fabs(W->At(k)));
    std::vector<float> scales(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) scales[c] = static_cast<float>(absmax[c] > 0 ? absmax[c] / 127.0 : 1.0);
    std::vector<int64_t> q(static_cast<size_t>(W->size()));
    for (int64_t k = 0; k < W->size(); ++k) q[k] = static_cast<int64_t>(std::clamp(std::nearbyint(W->At(k) / scales[k / inner % channels]), -127.0, 127.0));
    const std::string base = n.input(t.weight_input);
    const std::string wq = Inserted(base, "int8"), ws = Inserted(base, "scale"), wz = Inserted(base, "zero_point"), wd = Inserted(base, "dequantized");
    TB_RETURN_IF_ERROR(ReplaceInitializer(&p, wq, ConstTensor::Ints(W->shape, std::move(q)), "int8"));
    TB_RETURN_IF_ERROR(ReplaceInitializer(&p, ws, ConstTensor::Floats({channels}, scales), "float32"));
    TB_RETURN_IF_ERROR(ReplaceInitializer(&p, wz, ConstTensor::Ints({channels}, std::vector<int64_t>(static_cast<size_t>(channels), 0)), "int8"));
    added.push_back(add_node("DequantizeLinear", {wq, ws, wz}, wd, t.channel_axis));
    // The operator reads its dequantized input and weights.
    onnx::NodeProto& op = *g->mutable_node(ni);
    op.set_input(0, dequantized.at(t.activation));
    op.set_input(t.weight_input, wd);
    ++report.quantized_ops;
  }
  // Every reader of a quantized tensor but its own QuantizeLinear reads the dequantized value (the
  // QDQ form: a residual Add reads both its operands dequantized); a graph output keeps its name by
  // coming out of the DequantizeLinear.
  for (const auto& [v, dq] : dequantized) {
    const std::string own_q = Inserted(v, "quantized");
    for (int i = 0; i < g->node_size(); ++i)
      for (int k = 0; k < g->node(i).input_size(); ++k)
        if (g->node(i).input(k) == v) g->mutable_node(i)->set_input(k, dq);
    for (auto& n : added)
      for (int k = 0; k < n.input_size(); ++k)
        if (n.input(k) == v && n.output(0) != own_q) n.set_input(k, dq);
  }
  for (int i = 0; i < g->output_size(); ++i) {
    auto it = dequantized.find(g->output(i).name());
    if (it == dequantized.end()) continue;
    // The producer writes <name>_float; the DequantizeLinear writes the output's own name.
    const std::string name = it->first, inner = Inserted(name, "float");
    for (int k = 0; k < g->node_size(); ++k)
      for (int j = 0; j < g->node(k).output_size(); ++j)
        if (g->node(k).output(j) == name) g->mutable_node(k)->set_output(j, inner);
    for (auto& n : added) {
      for (int k = 0; k < n.input_size(); ++k)
        if (n.input(k) == name) n.set_input(k, inner);
      for (int k = 0; k < n.output_size(); ++k)
        if (n.output(k) == it->second) n.set_output(k, name);
    }
    for (int k = 0; k < g->node_size(); ++k)
      for (int j = 0; j < g->node(k).input_size(); ++j)
        if (g->node(k).input(j) == it->second) g->mutable_node(k)->set_input(j, name);
  }
  // The nodes in an order that reads nothing before it is written (a topological sort).
  std::vector<onnx::NodeProto> all(g->node().begin(), g->node().end());
  all.insert(all.end(), added.begin(), added.end());
  std::set<std::string> ready;
  for (const auto& i : g->input()) ready.insert(i.name());
  for (const auto& i : g->initializer()) ready.insert(i.name());
  ready.insert("");
  std::vector<onnx::NodeProto> sorted;
  std::vector<bool> placed(all.size(), false);
  for (bool progress = true; progress && sorted.size() < all.size();) {
    progress = false;
    for (size_t i = 0; i < all.size(); ++i) {
      if (placed[i]) continue;
      bool can = true;
      for (const auto& in : all[i].input()) can = can && ready.count(in);
      if (!can) continue;
      placed[i] = progress = true;
      for (const auto& out : all[i].output()) ready.insert(out);
      sorted.push_back(all[i]);
    }
  }
  if (sorted.size() != all.size()) return Status::InvalidInput(o.model_path + ": the quantized graph has a node whose input nothing writes (a subgraph's value?)");
  g->clear_node();
  for (auto& n : sorted) *g->add_node() = std::move(n);
  g->clear_value_info();  // shapes are inferred again by whoever reads it
  // opset 13 at least: per-axis DequantizeLinear.
  for (auto& op : *p.model.mutable_opset_import())
    if ((op.domain().empty() || op.domain() == "ai.onnx") && op.version() < 13) op.set_version(13);

  // Written beside the destination, checked by running it, then renamed into place.
  const std::string partial = o.output_path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream f(partial, std::ios::binary | std::ios::trunc);
    if (!f || !p.model.SerializeToOstream(&f)) return Status::InvalidInput("cannot write " + o.output_path);
  }
  auto quantized = model::LoadModel(partial, {}, nullptr);
  if (!quantized.ok()) {
    std::error_code ec;
    fs::remove(partial, ec);
    return quantized.status().WithContext("the quantized model");
  }
  auto qruns = RunAll(**quantized, *sets);
  if (!qruns.ok()) {
    std::error_code ec;
    fs::remove(partial, ec);
    return qruns.status();
  }
  for (size_t k = 0; k < model_outputs; ++k) {
    double signal = 0, noise = 0;
    for (size_t s = 0; s < reference.size(); ++s) {
      const TypedTensor& a = reference[s][k];
      const TypedTensor& b = (*qruns)[s][k];
      for (int64_t i = 0; i < a.size() && i < b.size(); ++i) {
        const double x = a.At(i), d = x - b.At(i);
        signal += x * x, noise += d * d;
      }
    }
    report.outputs.push_back({p.model.graph().output(static_cast<int>(k)).name(), noise > 0 ? 10 * std::log10(signal / noise) : INFINITY});
  }
  std::error_code ec;
  fs::rename(partial, o.output_path, ec);
  if (ec) {
    fs::remove(partial, ec);
    return Status::IoError("cannot rename into " + o.output_path);
  }
  return report;
}

}  // namespace tilebank::engine::quantize
