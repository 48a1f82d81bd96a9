#include "engine/runtime/layout_plan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/ir/constant_slice.h"
#include "engine/ir/node_op_spec.h"
#include "engine/passes/batch_norm_affine.h"
#include "engine/passes/spatial_reduction.h"

namespace tilebank::engine::model {
namespace {

// Whether `v` is a float32 constant of one value throughout: the same in any layout of its shape.
bool UniformConstant(const Graph& g, int v) {
  if (!g.IsConstant(v)) return false;
  const ConstTensor& c = *g.values[v].constant;
  return c.floats.empty() ? c.released_uniform : c.Uniform();
}

// Node `n` as an operator that runs in any layout family (engine/backends/onednn/onednn_layout_ops.h), with
// the run-time values it reads in `runtime_inputs`; nullopt for every other node or form.
std::optional<LayoutFamilyOp> FamilyOpOf(const Graph& g, const Node& n, std::vector<int>* runtime_inputs) {
  if (n.outputs.empty() || n.outputs[0] < 0) return std::nullopt;
  if ((n.op_type == "ReduceMax" || n.op_type == "ReduceMean") && ReducesEverySpatialAxis(g, n)) {  // a global pool, dims kept or not
    LayoutFamilyOp op;
    op.kind = LayoutFamilyOp::Kind::kGlobalPool;
    op.op_type = n.op_type == "ReduceMax" ? "GlobalMaxPool" : "GlobalAveragePool";
    op.inputs = {g.values[n.inputs[0]].shape};
    op.output = op.inputs[0];
    std::fill(op.output.begin() + 2, op.output.end(), int64_t{1});
    *runtime_inputs = {n.inputs[0]};
    return op;
  }
  if ((n.op_type == "ReduceMean" || n.op_type == "ReduceSum" || n.op_type == "ReduceMax") && ReducesChannelAxis(g, n)) {  // one channel, row-major
    LayoutFamilyOp op;
    op.kind = LayoutFamilyOp::Kind::kChannelReduce;
    op.op_type = n.op_type;
    op.inputs = {g.values[n.inputs[0]].shape};
    op.output = g.values[n.outputs[0]].shape;
    *runtime_inputs = {n.inputs[0]};
    return op;
  }
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (n.outputs[k] >= 0) return std::nullopt;
  const auto& out = g.values[n.outputs[0]];
  if (out.dtype != "float32" || !out.shape_known || out.shape.size() < 3 || out.shape.size() > 5) return std::nullopt;
  LayoutFamilyOp op;
  op.output = out.shape;
  const int rank = static_cast<int>(out.shape.size());
  auto runtime = [&](int v) { return v >= 0 && !g.IsConstant(v) && g.values[v].dtype == "float32" && g.values[v].shape_known; };
  runtime_inputs->clear();
  if (n.op_type == "Concat") {
    int64_t axis = g.AttrInt(n, "axis", 1);
    op.kind = LayoutFamilyOp::Kind::kConcat;
    op.axis = axis < 0 ? axis + rank : axis;
    for (int v : n.inputs) {
      if (!runtime(v) || g.values[v].shape.size() != out.shape.size()) return std::nullopt;
      runtime_inputs->push_back(v);
      op.inputs.push_back(g.values[v].shape);
    }
    return op.axis == 1 && op.inputs.size() >= 2 ? std::optional(op) : std::nullopt;
  }
  if (n.op_type == "Add" || n.op_type == "Sub" || n.op_type == "Mul" || n.op_type == "Div") {
    // The full-shape operand first (Sub and Div only as written), the other per channel or per position.
    if (n.inputs.size() != 2 || !runtime(n.inputs[0]) || !runtime(n.inputs[1])) return std::nullopt;
    int full = g.values[n.inputs[0]].shape == out.shape ? 0 : 1;
    if (full == 1 && (n.op_type == "Sub" || n.op_type == "Div")) return std::nullopt;
    const auto& x = g.values[n.inputs[full]].shape;
    std::vector<int64_t> other = g.values[n.inputs[1 - full]].shape;
    if (x != out.shape || other.size() > out.shape.size()) return std::nullopt;
    other.insert(other.begin(), out.shape.size() - other.size(), 1);
    const bool per_channel = LayoutFree(other) && other[1] == out.shape[1];  // a scalar operand is elementwise already
    // One value per position (an attention gate's map), read row-major: alike in every unblocked family.
    const bool per_position = other[1] == 1 && !LayoutFree(other) && std::equal(other.begin() + 2, other.end(), out.shape.begin() + 2) &&
                              (other[0] == 1 || other[0] == out.shape[0]);
    if (!per_channel && !per_position) return std::nullopt;
    op.kind = per_channel ? LayoutFamilyOp::Kind::kBinary : LayoutFamilyOp::Kind::kPerPositionBinary;
    if (per_position) op.row_major_inputs = {false, true};
    op.op_type = n.op_type;
    op.inputs = {x, g.values[n.inputs[1 - full]].shape};
    *runtime_inputs = {n.inputs[full], n.inputs[1 - full]};
    return op;
  }
  if (n.inputs.empty() || !runtime(n.inputs[0]) || g.values[n.inputs[0]].shape.size() != out.shape.size()) return std::nullopt;
  const auto& in = g.values[n.inputs[0]].shape;
  runtime_inputs->push_back(n.inputs[0]);
  op.inputs = {in};
  if (n.op_type == "Slice") {  // opset 10+: starts, ends, axes, steps as constant inputs
    if (n.inputs.size() > 2 && !g.IsConstant(n.inputs[2])) return std::nullopt;
    auto starts = ConstantSliceStarts(g, n, in);
    if (!starts || g.values[n.inputs[1]].constant->size() == 0) return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kSlice;
    op.offsets = std::move(*starts);
    for (int d = 0; d < rank; ++d)
      if (op.offsets[d] + out.shape[d] > in[d]) return std::nullopt;
    return op;
  }
  if (n.op_type == "Gather") {  // channels picked by constant indices (a channel shuffle)
    int64_t axis = g.AttrInt(n, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis != 1 || n.inputs.size() != 2 || !g.IsConstant(n.inputs[1])) return std::nullopt;
    const ConstTensor& indices = *g.values[n.inputs[1]].constant;
    if (indices.shape.size() != 1 || !indices.IsInteger() || indices.size() != out.shape[1]) return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kChannelGather;
    for (int64_t j = 0; j < indices.size(); ++j) {
      const int64_t c = indices.IntAt(j) < 0 ? indices.IntAt(j) + in[1] : indices.IntAt(j);
      if (c < 0 || c >= in[1]) return std::nullopt;
      op.channels.push_back(c);
    }
    return op;
  }
  if (n.op_type == "BatchNormalization" || n.op_type == "FusedBatchNormalization") {  // inference form: one output
    auto affine = BatchNormAffine(g, n, in[1]);
    if (!affine.ok() || out.shape != in) return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kAffine;
    op.relu = n.op_type == "FusedBatchNormalization";
    op.scale.assign(affine->scale.begin(), affine->scale.end());
    op.shift.assign(affine->shift.begin(), affine->shift.end());
    return op;
  }
  if (n.op_type == "FusedGroupNormalization" || n.op_type == "InstanceNormalization") {  // per-channel scale and shift
    if (out.shape != in || n.inputs.size() < 3 || !g.IsConstant(n.inputs[1]) || !g.IsConstant(n.inputs[2])) return std::nullopt;
    const ConstTensor &scale = *g.values[n.inputs[1]].constant, &shift = *g.values[n.inputs[2]].constant;
    const int64_t C = in[1];
    op.groups = n.op_type == "InstanceNormalization" ? C : g.AttrInt(n, "num_groups", 0);
    if (scale.size() != C || shift.size() != C || op.groups < 1 || C % op.groups) return std::nullopt;
    const std::string activation = g.AttrString(n, "activation", "");
    if (!activation.empty() && activation != "Swish") return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kGroupNorm;
    op.epsilon = g.AttrFloat(n, "epsilon", 1e-5f);
    op.swish = activation == "Swish";
    for (int64_t c = 0; c < C; ++c) op.scale.push_back(static_cast<float>(scale.At(c))), op.shift.push_back(static_cast<float>(shift.At(c)));
    return op;
  }
  if (n.op_type == "ConvTranspose") {  // a kernel that tiles the output: strides = kernel, no pads, dilation 1, one group
    if (n.inputs.size() < 2 || !g.IsConstant(n.inputs[1]) || (n.inputs.size() > 2 && n.inputs[2] >= 0 && !g.IsConstant(n.inputs[2]))) return std::nullopt;
    const ConstTensor& w = *g.values[n.inputs[1]].constant;
    if (w.type != ConstTensor::Type::kFloat || w.shape.size() != in.size() || w.shape[0] != in[1] || out.shape[1] != w.shape[1]) return std::nullopt;
    const std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
    const size_t spatial = kernel.size();
    if (g.AttrInt(n, "group", 1) != 1 || g.AttrInts(n, "kernel_shape", kernel) != kernel || g.AttrInts(n, "strides", {}) != kernel ||
        g.AttrInts(n, "dilations", std::vector<int64_t>(spatial, 1)) != std::vector<int64_t>(spatial, 1) ||
        g.AttrInts(n, "pads", std::vector<int64_t>(2 * spatial, 0)) != std::vector<int64_t>(2 * spatial, 0) ||
        g.AttrInts(n, "output_padding", std::vector<int64_t>(spatial, 0)) != std::vector<int64_t>(spatial, 0) ||
        !g.AttrInts(n, "output_shape", {}).empty() || g.AttrString(n, "auto_pad", "NOTSET") != "NOTSET")
      return std::nullopt;
    for (size_t d = 0; d < spatial; ++d)
      if (out.shape[2 + d] != in[2 + d] * kernel[d]) return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kConvTransposeTiled;
    op.kernel = kernel;
    op.scale = w.floats;
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const ConstTensor& b = *g.values[n.inputs[2]].constant;
      if (b.size() != out.shape[1]) return std::nullopt;
      for (int64_t m = 0; m < b.size(); ++m) op.shift.push_back(static_cast<float>(b.At(m)));
    }
    return op;
  }
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
    if (!LayoutFree(out.shape) || out.shape[1] != in[1]) return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kGlobalPool;
    op.op_type = n.op_type;
    return op;
  }
  if ((n.op_type == "MaxPool" || n.op_type == "AveragePool") && LayoutFree(out.shape) && out.shape[1] == in[1]) {
    // A window of the whole map, unpadded (torch's adaptive_max_pool2d(x, 1)): a global pool.
    const std::vector<int64_t> spatial(in.begin() + 2, in.end()), ones(spatial.size(), 1), zeros(2 * spatial.size(), 0);
    const std::string auto_pad = g.AttrString(n, "auto_pad", "NOTSET");
    if (g.AttrInts(n, "kernel_shape", {}) == spatial && g.AttrInts(n, "pads", zeros) == zeros && g.AttrInts(n, "dilations", ones) == ones &&
        (auto_pad == "NOTSET" || auto_pad == "VALID")) {
      op.kind = LayoutFamilyOp::Kind::kGlobalPool;
      op.op_type = n.op_type == "MaxPool" ? "GlobalMaxPool" : "GlobalAveragePool";
      return op;
    }
  }
  if (n.op_type == "MaxPool" || n.op_type == "AveragePool") {
    auto spec = NodeOpSpec(g, n);
    if (!spec.ok() || !OneDnnSupportsVectorOp(spec->op).ok()) return std::nullopt;
    op.kind = LayoutFamilyOp::Kind::kPool;
    op.pool = spec->op;
    return op;
  }
  if (n.op_type == "Resize") {  // nearest or linear along the spatial axes, N and C unchanged (ResizeTap)
    const std::string mode = g.AttrString(n, "mode", "nearest"), transform = g.AttrString(n, "coordinate_transformation_mode", "half_pixel");
    const std::string nearest_mode = g.AttrString(n, "nearest_mode", "round_prefer_floor");
    if (g.opset != 0 && g.opset < 11) return std::nullopt;  // opset 10's Resize: scales its input 1, asymmetric coordinates
    if ((mode != "nearest" && mode != "linear") || g.AttrInt(n, "antialias", 0) != 0 || !g.AttrInts(n, "axes", {}).empty() ||
        (transform != "half_pixel" && transform != "pytorch_half_pixel" && transform != "align_corners" && transform != "asymmetric"))
      return std::nullopt;
    for (size_t k = 1; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && !g.IsConstant(n.inputs[k])) return std::nullopt;
    // N and C as they are; an output of one position is a global pool, not a resize in the family.
    if (out.shape[0] != in[0] || out.shape[1] != in[1] || LayoutFree(out.shape)) return std::nullopt;
    std::vector<double> scales;  // as given (ONNX divides by in * scale, not the rounded size)
    if (n.inputs.size() > 2 && n.inputs[2] >= 0)
      for (int64_t i = 0; i < g.values[n.inputs[2]].constant->size(); ++i) scales.push_back(g.values[n.inputs[2]].constant->At(i));
    if (static_cast<int>(scales.size()) == rank && (scales[0] != 1 || scales[1] != 1)) return std::nullopt;
    // oneDNN's nearest resampling reads input o * in / out along each axis: whole factors, those taps.
    op.whole_factor_nearest = mode == "nearest";
    for (int d = 2; d < rank; ++d) {
      if (in[d] == 0 || out.shape[d] == 0) return std::nullopt;
      const double scale = static_cast<int>(scales.size()) == rank ? scales[d] : 0.0;
      op.taps.push_back(ResizeAxisTaps(in[d], out.shape[d], scale, mode, transform, nearest_mode));
      op.whole_factor_nearest = op.whole_factor_nearest && out.shape[d] % in[d] == 0;
      for (int64_t o = 0; op.whole_factor_nearest && o < out.shape[d]; ++o) op.whole_factor_nearest = op.taps.back()[o].lo == o * in[d] / out.shape[d];
    }
    op.kind = LayoutFamilyOp::Kind::kResize;
    return op;
  }
  return std::nullopt;
}

// A value handed over in a native layout goes narrow (bfloat16) when the step writing it and every
// step reading it take it so in that layout: a kernel computing in bf16, or a family step whose
// kernel in its group's family reads or writes bf16 (a squeeze-excitation's pool and scale between
// two bf16 convolutions), with at least one of them a kernel computing in bf16 (two family steps
// alone would round a float32 value for nothing); no elementwise, other data-movement or converting
// step, no model input or output (those are row-major already), one writer.
// `plan` has its family kernels; its layout_of is narrowed in place.
void NarrowWhereAllComputeInBf16(const Graph& graph, const std::vector<LayoutStep>& steps,
                                 const std::vector<std::optional<LayoutFamilyOp>>& family_op, LayoutPlan* plan) {
  const size_t values = graph.values.size();
  std::vector<HandoverLayout> narrow(values);
  std::vector<bool> refused(values, false);
  std::vector<bool> computed(values, false);  // a step computing in bf16 writes or reads it
  std::vector<int> writers(values, 0);
  // `offered` for value v by one of its steps: all must offer the same narrow layout.
  auto take = [&](int v, const HandoverLayout& offered, bool computes) {
    if (offered.row_major() || (!narrow[v].row_major() && narrow[v].key != offered.key)) refused[v] = true;
    else narrow[v] = offered, computed[v] = computed[v] || computes;
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const LayoutStep& s = steps[i];
    const Kernel* in_family = plan->family_kernels[i].get();  // null unless the step runs in its group's family
    const bool takes = in_family || (s.kind == LayoutStep::Kind::kLayoutKernel && !plan->agnostic[i] && !family_op[i] && !s.converts);
    const std::vector<int>& inputs = in_family ? plan->family_inputs[i] : s.inputs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int v = inputs[k];
      if (v < 0 || graph.IsConstant(v)) continue;
      if (in_family) take(v, in_family->NarrowLayout(static_cast<int>(k)), false);
      else if (takes && k < s.narrow_inputs.size()) take(v, s.narrow_inputs[k], true);
      else refused[v] = true;
    }
    if (s.output < 0) continue;
    ++writers[s.output];
    if (takes) take(s.output, in_family ? in_family->NarrowLayout(-1) : s.narrow_output, !in_family);
    else refused[s.output] = true;
  }
  std::vector<HandoverLayout>& layout_of = plan->layout_of;
  for (size_t v = 0; v < values; ++v)
    if (!refused[v] && computed[v] && writers[v] == 1 && !layout_of[v].row_major() && !narrow[v].row_major()) layout_of[v] = narrow[v];
}

}  // namespace

LayoutPlan PlanLayouts(const Graph& graph, const std::vector<LayoutStep>& steps, bool enabled, const FamilyKernelBuilder& build) {
  const size_t values = graph.values.size();
  LayoutPlan plan;
  plan.layout_of.assign(values, HandoverLayout{});
  plan.family_kernels.resize(steps.size());
  plan.family_inputs.resize(steps.size());
  plan.family.resize(steps.size());
  plan.agnostic.assign(steps.size(), false);
  if (!enabled) return plan;
  // An elementwise step whose run-time inputs all have its output's shape (or one element) computes
  // the same in any layout of them: its inputs and output form one group that takes one layout.
  auto agnostic = [&](size_t i) {
    const LayoutStep& s = steps[i];
    if (s.kind == LayoutStep::Kind::kAlias && s.output >= 0 && !s.inputs.empty() && graph.values[s.inputs[0]].shape == graph.values[s.output].shape)
      return true;  // an alias of the same shape (Identity, a Pad of nothing) shares the buffer as it is
    if (!s.pointwise || s.output < 0) return false;
    bool same_shape_input = false;
    for (int v : s.inputs) {
      if (v < 0) continue;
      const bool same_shape = graph.values[v].shape == graph.values[s.output].shape;
      const bool same = same_shape && !graph.IsConstant(v);
      if (!same && Tensor::NumElements(graph.values[v].shape) != 1 && !(same_shape && UniformConstant(graph, v))) return false;
      same_shape_input |= same;
    }
    return same_shape_input;
  };
  // The step writing each value, where a step does.
  std::vector<int> producer(values, -1);
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].output >= 0) producer[steps[i].output] = static_cast<int>(i);
  const std::set<int> model_inputs(graph.inputs.begin(), graph.inputs.end());
  // Data movement and per-channel work (Concat, Slice, pooling, Resize, BatchNormalization, group norms,
  // per-channel and per-position binary ops, reductions over channels: engine/backends/onednn/onednn_layout_ops.h) runs in whichever layout family its
  // neighbours write: its inputs and output join one group that takes one family, each value in
  // that family over its own shape.
  std::vector<std::optional<LayoutFamilyOp>> family_op(steps.size());
  std::vector<std::vector<int>>& family_inputs = plan.family_inputs;
  std::vector<int> family_anchor(steps.size(), -1);  // a value of the step's group (layout-free values join none)
  // Layout-free values a data-movement step reads or writes: row-major to it whether or not it is
  // replaced, so their readers and writers must take them row-major too (a padded nChw8c of
  // [1, C, 1, 1], a convolution's native layout on AVX2, is not).
  std::vector<int> row_major_only;
  std::vector<int> group(values);
  for (size_t v = 0; v < values; ++v) group[v] = static_cast<int>(v);
  std::function<int(int)> find = [&](int v) { return group[v] == v ? v : group[v] = find(group[v]); };
  std::vector<bool>& is_agnostic = plan.agnostic;
  for (size_t i = 0; i < steps.size(); ++i) {
    const LayoutStep& s = steps[i];
    is_agnostic[i] = agnostic(i);
    if (is_agnostic[i]) {
      for (int v : s.inputs)
        if (v >= 0 && !graph.IsConstant(v) && graph.values[v].shape == graph.values[s.output].shape) group[find(v)] = find(s.output);
      continue;
    }
    if (s.kind == LayoutStep::Kind::kLayoutKernel && s.output >= 0)
      family_op[i] = FamilyOpOf(graph, graph.nodes[s.node], &family_inputs[i]);
    if (!family_op[i]) continue;
    // A Concat reads an input row-major, outside its group, where nothing could write it natively:
    // a model input, or the output of a step with no native layout that neither computes the same in
    // any layout nor runs in a family (ConvLSTM's frame Gather, joined to the hidden state before
    // each gate convolution). One reorder of that input instead of the whole group row-major.
    auto written_row_major = [&](int v) {
      if (model_inputs.count(v)) return true;
      const int p = producer[v];
      if (p < 0 || is_agnostic[p] || family_op[p] || steps[p].converts) return false;
      return steps[p].kind == LayoutStep::Kind::kOther || steps[p].native_output.row_major();
    };
    if (family_op[i]->kind == LayoutFamilyOp::Kind::kConcat) {
      std::vector<bool> row_major(family_inputs[i].size());
      for (size_t k = 0; k < row_major.size(); ++k) row_major[k] = written_row_major(family_inputs[i][k]);
      if (std::count(row_major.begin(), row_major.end(), false) > 0) family_op[i]->row_major_inputs = row_major;
    }
    std::vector<int> tied;
    if (family_op[i]->WritesRowMajor()) row_major_only.push_back(s.output);
    else tied.push_back(s.output);
    for (size_t k = 0; k < family_inputs[i].size(); ++k) {
      if (family_op[i]->ReadsRowMajor(k)) {
        row_major_only.push_back(family_inputs[i][k]);  // whatever its own group would take: the step reads it row-major
        continue;
      }
      tied.push_back(family_inputs[i][k]);
    }
    for (int v : tied) {
      if (LayoutFree(graph.values[v].shape) || graph.values[v].shape.size() < 3) {  // a reduction's [N, C] too
        row_major_only.push_back(v);
        continue;
      }
      if (family_anchor[i] < 0) family_anchor[i] = v;
      group[find(v)] = find(family_anchor[i]);
    }
    if (family_anchor[i] < 0) family_op[i].reset();
  }
  // Per group: the layout its producers write natively (one key; with data movement in the group,
  // one family), and whether every reader takes it.
  struct GroupLayout {
    HandoverLayout layout;
    std::string family;
    bool possible = true, has_agnostic = false, has_family_op = false;
    int64_t elements = 0;
  };
  std::map<int, GroupLayout> groups;
  for (size_t i = 0; i < steps.size(); ++i)
    if (family_op[i]) groups[find(family_anchor[i])].has_family_op = true;
  auto refuse = [&](int v) { groups[find(v)].possible = false; };
  // A native layout `native` of value `v` that a producer writes or a reader takes.
  auto meet = [&](int v, const HandoverLayout& native) {
    GroupLayout& g = groups[find(v)];
    if (native.row_major() || (!g.family.empty() && g.family != native.name)) g.possible = false;
    g.family = native.name;
    if (g.has_family_op) {
      if (LayoutInFamily(native.name, graph.values[v].shape).key != native.key) g.possible = false;
    } else if (g.layout.row_major()) {
      g.layout = native;
    } else if (g.layout.key != native.key) {
      g.possible = false;
    }
  };
  for (int v : graph.inputs) refuse(v);
  for (int v : graph.outputs) refuse(v);
  for (int v : row_major_only) refuse(v);
  for (size_t i = 0; i < steps.size(); ++i) {
    const LayoutStep& s = steps[i];
    if (s.output < 0 || family_op[i] || s.converts) continue;
    GroupLayout& g = groups[find(s.output)];
    g.elements = Tensor::NumElements(graph.values[s.output].shape);
    if (is_agnostic[i]) {
      g.has_agnostic = true;
      continue;
    }
    meet(s.output, s.native_output);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const LayoutStep& s = steps[i];
    if (is_agnostic[i] || family_op[i] || s.converts) continue;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const int v = s.inputs[k];
      if (v < 0 || graph.IsConstant(v)) continue;
      meet(v, k < s.native_inputs.size() ? s.native_inputs[k] : HandoverLayout{});
    }
  }
  // Elementwise steps see every float of the buffer: no padding. Neither does data movement.
  for (auto& [root, g] : groups)
    if (g.family.empty() || (!g.has_family_op && g.has_agnostic && g.layout.floats != g.elements)) g.possible = false;
  auto layout_in_group = [&](int v) -> HandoverLayout {
    const GroupLayout& g = groups.at(find(v));
    return g.has_family_op ? LayoutInFamily(g.family, graph.values[v].shape) : g.layout;
  };
  for (size_t v = 0; v < values; ++v) {
    auto it = groups.find(find(static_cast<int>(v)));
    if (it == groups.end() || !it->second.possible || !it->second.has_family_op || graph.IsConstant(static_cast<int>(v))) continue;
    if (LayoutFree(graph.values[v].shape)) continue;  // row-major in every family
    const HandoverLayout layout = layout_in_group(static_cast<int>(v));
    if (layout.row_major() || layout.floats != Tensor::NumElements(graph.values[v].shape)) it->second.possible = false;
  }
  // The data-movement kernels of each handed-over group; one oneDNN cannot build keeps the group row-major.
  std::vector<std::unique_ptr<Kernel>>& family_kernels = plan.family_kernels;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!family_op[i]) continue;
    GroupLayout& g = groups.at(find(family_anchor[i]));
    if (!g.possible) continue;
    auto kernel = build(*family_op[i], g.family);
    if (kernel.ok()) family_kernels[i] = std::move(kernel.value());
    else g.possible = false;
  }
  for (size_t v = 0; v < values; ++v)
    if (auto it = groups.find(find(static_cast<int>(v))); it != groups.end() && it->second.possible && !graph.IsConstant(static_cast<int>(v)))
      plan.layout_of[v] = layout_in_group(static_cast<int>(v));
  for (size_t i = 0; i < steps.size(); ++i) {
    if (family_op[i] && groups.at(find(family_anchor[i])).possible) {
      plan.family[i] = groups.at(find(family_anchor[i])).family;
    } else {
      family_kernels[i].reset();
      family_inputs[i].clear();
    }
  }
  NarrowWhereAllComputeInBf16(graph, steps, family_op, &plan);
  return plan;
}

}  // namespace tilebank::engine::model
