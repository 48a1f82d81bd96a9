#include "engine/backends/onednn/onednn_layout_ops.h"

#include <algorithm>
#include <cstring>

#include "engine/backends/onednn/channel_gather_in_family.h"
#include "engine/backends/onednn/channel_reduce_in_family.h"
#include "engine/backends/onednn/concat_in_family.h"
#include "engine/backends/onednn/conv_transpose_in_family.h"
#include "engine/backends/onednn/group_norm_in_family.h"
#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/onednn_vector_ops.h"
#include "engine/backends/onednn/global_pool_in_family.h"
#include "engine/backends/onednn/per_channel_in_family.h"
#include "engine/backends/onednn/per_position_in_family.h"
#include "engine/backends/onednn/pool_in_family.h"
#include "engine/backends/onednn/resize_in_family.h"

namespace tilebank::engine {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// The families a layout plan meets: channels-last and channel-blocked, rank 3 to 5.
std::vector<tag> FamilyTags(size_t rank) {
  if (rank == 3) return {tag::acb, tag::aBc16b, tag::aBc8b, tag::aBc4b};
  if (rank == 4) return {tag::acdb, tag::aBcd16b, tag::aBcd8b, tag::aBcd4b};
  if (rank == 5) return {tag::acdeb, tag::aBcde16b, tag::aBcde8b, tag::aBcde4b};
  return {};
}

// The descriptor of `shape` in `family`; a zero descriptor when there is none. A layout-free shape
// gets the family's descriptor where it lays the floats out as row-major does (oneDNN's JIT
// kernels want one format on both sides), else row-major's.
memory::desc FamilyDesc(const std::string& family, const std::vector<int64_t>& shape) {
  const bool free = LayoutFree(shape);
  const memory::desc row_major = RowMajorDesc(shape);
  for (tag t : FamilyTags(shape.size())) {
    memory::desc md(memory::dims(shape.begin(), shape.end()), memory::data_type::f32, t);
    if (free) {
      memory::dims spread(shape.begin(), shape.end());  // the same tag over spatial axes of 2 names the family
      for (size_t d = 2; d < spread.size(); ++d) spread[d] = 2;
      const std::string name = HandoverLayoutOf(memory::desc(spread, memory::data_type::f32, t)).name;
      if (name == family) return md.get_size() == row_major.get_size() ? md : row_major;
      continue;
    }
    const HandoverLayout layout = HandoverLayoutOf(md);
    if (!layout.row_major() && layout.name == family) return md;
  }
  return free ? row_major : memory::desc();
}

class FamilyKernel : public Kernel {
 public:
  FamilyKernel() : stream_(OneDnnCpuEngine()) {}
  Status Prepare(const std::vector<const Tensor*>&) override { return Unsupported(); }
  Status Run() override { return Unsupported(); }
  Status Fetch(Tensor*) override { return Unsupported(); }
  Status RunDirect(const std::vector<const float*>& in, float* out) override {
    for (size_t i = 0; i < input_args_.size(); ++i) args_.at(input_args_[i]).set_data_handle(const_cast<float*>(in[i]));
    args_.at(output_arg_).set_data_handle(out);
    ExecuteAndWait(prim_, stream_, args_);
    return Status::Ok();
  }

  // Builds the primitive for `op` in `family`.
  void Create(const LayoutFamilyOp& op, const std::string& family) {
    auto& engine = OneDnnCpuEngine();
    std::vector<memory::desc> srcs;
    const bool mixed = op.ReadsRowMajorInputs();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const bool row_major = (op.kind == LayoutFamilyOp::Kind::kBinary && i == 1) || op.ReadsRowMajor(i);
      srcs.push_back(row_major ? RowMajorDesc(op.inputs[i]) : FamilyDesc(family, op.inputs[i]));
    }
    const memory::desc dst = FamilyDesc(family, op.output);
    for (const auto& md : srcs)
      if (md.is_zero()) throw dnnl::error(dnnl_invalid_arguments, "no such layout family for an input");
    if (dst.is_zero()) throw dnnl::error(dnnl_invalid_arguments, "no such layout family for the output");
    output_arg_ = DNNL_ARG_DST;
    switch (op.kind) {
      case LayoutFamilyOp::Kind::kConcat: {
        auto pd = dnnl::concat::primitive_desc(dst, static_cast<int>(op.axis), srcs, engine);
        prim_ = dnnl::concat(pd);
        for (size_t i = 0; i < srcs.size(); ++i) Bind(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), srcs[i]);
        if (pd.scratchpad_desc().get_size() > 0) args_[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), engine);
        break;
      }
      case LayoutFamilyOp::Kind::kSlice: {  // the output's part of the input, reordered out
        const memory::desc part = srcs[0].submemory_desc(memory::dims(op.output.begin(), op.output.end()),
                                                         memory::dims(op.offsets.begin(), op.offsets.end()));
        prim_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, part, engine, dst));
        Bind(DNNL_ARG_FROM, part);
        output_arg_ = DNNL_ARG_TO;
        break;
      }
      case LayoutFamilyOp::Kind::kPool:
      case LayoutFamilyOp::Kind::kGlobalPool: {
        auto pd = op.kind == LayoutFamilyOp::Kind::kPool ? OneDnnPoolingPrimitive(op.pool, srcs[0], dst)
                                                         : OneDnnGlobalPoolingPrimitive(op.op_type == "GlobalMaxPool", srcs[0], dst);
        prim_ = dnnl::pooling_v2_forward(pd);
        Bind(DNNL_ARG_SRC, srcs[0]);
        if (pd.scratchpad_desc().get_size() > 0) args_[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), engine);
        break;
      }
      case LayoutFamilyOp::Kind::kBinary: {  // the per-channel operand at the output's rank, in the family's format
        std::vector<int64_t> operand = op.inputs[1];
        operand.insert(operand.begin(), op.output.size() - operand.size(), 1);
        const memory::desc other = FamilyDesc(family, operand);
        prim_ = dnnl::binary(dnnl::binary::primitive_desc({OneDnnBinaryAlgorithm(op.op_type), srcs[0], other, dst}, engine));
        Bind(DNNL_ARG_SRC_0, srcs[0]);
        Bind(DNNL_ARG_SRC_1, other);
        break;
      }
      case LayoutFamilyOp::Kind::kAffine: {  // x * scale, then + shift as a post-op; both constants per channel
        std::vector<int64_t> per_channel(op.output.size(), 1);
        per_channel[1] = op.output[1];
        const memory::desc channel = FamilyDesc(family, per_channel);
        dnnl::post_ops shift;
        shift.append_binary(dnnl::algorithm::binary_add, channel);
        if (op.relu) shift.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        dnnl::primitive_attr attr;
        attr.set_post_ops(shift);
        prim_ = dnnl::binary(dnnl::binary::primitive_desc({dnnl::algorithm::binary_mul, srcs[0], channel, dst}, attr, engine));
        Bind(DNNL_ARG_SRC_0, srcs[0]);
        args_[DNNL_ARG_SRC_1] = Constant(channel, op.scale);
        args_[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = Constant(channel, op.shift);
        break;
      }
      case LayoutFamilyOp::Kind::kResize: {
        auto pd = dnnl::resampling_forward::primitive_desc(
            {dnnl::prop_kind::forward_inference, dnnl::algorithm::resampling_nearest, srcs[0], dst}, engine);
        prim_ = dnnl::resampling_forward(pd);
        Bind(DNNL_ARG_SRC, srcs[0]);
        break;
      }
    }
    args_[output_arg_] = memory(dst, engine, DNNL_MEMORY_NONE);
    // oneDNN's reference kernels (what it falls back to for a format its JIT kernels lack) lose
    // more than the layout saves: such a family is refused and the group stays row-major. (A concat
    // of mixed layouts is "ref:any" by name, a reorder into its part of the output per input.)
    const char* impl = nullptr;
    dnnl_primitive_desc_query(prim_.get_primitive_desc(), dnnl_query_impl_info_str, 0, &impl);
    if (impl && std::string(impl).rfind("ref", 0) == 0 && !mixed) throw dnnl::error(dnnl_unimplemented, "only a reference kernel in this layout family");
  }

 private:
  static Status Unsupported() { return Status::InvalidInput("a layout-family kernel runs only on a model's direct path"); }
  // `values` (one per channel) in `md`, which lays them out as row-major does.
  static memory Constant(const memory::desc& md, const std::vector<float>& values) {
    if (md.get_size() != values.size() * sizeof(float)) throw dnnl::error(dnnl_invalid_arguments, "a padded per-channel constant");
    memory m(md, OneDnnCpuEngine());
    std::memcpy(m.get_data_handle(), values.data(), md.get_size());
    return m;
  }
  void Bind(int arg, const memory::desc& md) {
    input_args_.push_back(arg);
    args_[arg] = memory(md, OneDnnCpuEngine(), DNNL_MEMORY_NONE);
  }

  dnnl::stream stream_;
  dnnl::primitive prim_;
  std::vector<int> input_args_;  // per run-time input, in order
  int output_arg_ = DNNL_ARG_DST;
  std::unordered_map<int, memory> args_;
};

}  // namespace

bool LayoutFree(const std::vector<int64_t>& shape) {
  if (shape.size() < 3) return false;
  for (size_t d = 2; d < shape.size(); ++d)
    if (shape[d] != 1) return false;
  return true;
}

HandoverLayout LayoutInFamily(const std::string& family, const std::vector<int64_t>& shape) {
  try {
    const memory::desc md = FamilyDesc(family, shape);
    return md.is_zero() ? HandoverLayout{} : HandoverLayoutOf(md);
  } catch (const dnnl::error&) {
    return {};
  }
}

Result<std::unique_ptr<Kernel>> LayoutFamilyKernel(const LayoutFamilyOp& op, const std::string& family) {
  return CatchOneDnnErrors([&]() -> Result<std::unique_ptr<Kernel>> {
    if (op.kind == LayoutFamilyOp::Kind::kGroupNorm || op.kind == LayoutFamilyOp::Kind::kConvTransposeTiled) {
      const memory::desc md = FamilyDesc(family, op.output);
      if (md.is_zero() || LayoutFree(op.output) || (op.kind == LayoutFamilyOp::Kind::kConvTransposeTiled && FamilyDesc(family, op.inputs[0]).is_zero()))
        return Status::InvalidInput("no layout of family " + family + " for it");
      return op.kind == LayoutFamilyOp::Kind::kGroupNorm ? GroupNormInFamily(op, md) : ConvTransposeInFamily(op, md);
    }
    if (op.kind == LayoutFamilyOp::Kind::kBinary || op.kind == LayoutFamilyOp::Kind::kAffine) {
      // Our loop where the family is dense over channels; oneDNN's binary primitive otherwise.
      const memory::desc md = FamilyDesc(family, op.output);
      if (!md.is_zero() && !LayoutFree(op.output))
        if (auto own = PerChannelInFamily(op, md); own.ok()) return own;
    }
    if (op.kind == LayoutFamilyOp::Kind::kChannelReduce) {  // our loop only
      const memory::desc md = FamilyDesc(family, op.inputs[0]);
      if (md.is_zero() || LayoutFree(op.inputs[0])) return Status::InvalidInput("no layout of family " + family + " for it");
      return ChannelReduceInFamily(op, md);
    }
    if (op.kind == LayoutFamilyOp::Kind::kChannelGather) {  // our loop only
      const memory::desc src = FamilyDesc(family, op.inputs[0]), dst = FamilyDesc(family, op.output);
      if (src.is_zero() || dst.is_zero() || LayoutFree(op.output)) return Status::InvalidInput("no layout of family " + family + " for it");
      return ChannelGatherInFamily(op, src, dst);
    }
    if (op.kind == LayoutFamilyOp::Kind::kPerPositionBinary) {  // our loop only
      const memory::desc md = FamilyDesc(family, op.output);
      if (md.is_zero() || LayoutFree(op.output)) return Status::InvalidInput("no layout of family " + family + " for it");
      return PerPositionInFamily(op, md);
    }
    if (op.kind == LayoutFamilyOp::Kind::kResize) {  // oneDNN's JIT resampling for whole-factor nearest, else our loop
      if (op.whole_factor_nearest) {
        auto kernel = std::make_unique<FamilyKernel>();
        try {
          kernel->Create(op, family);
          return std::unique_ptr<Kernel>(std::move(kernel));
        } catch (const dnnl::error&) {  // only a reference kernel in this family
        }
      }
      const memory::desc src = FamilyDesc(family, op.inputs[0]), dst = FamilyDesc(family, op.output);
      if (src.is_zero() || dst.is_zero()) return Status::InvalidInput("no layout of family " + family + " for it");
      return ResizeInFamily(op, src, dst);  // oneDNN's resampling has neither these coordinates nor nearest's rounding modes
    }
    if (op.kind == LayoutFamilyOp::Kind::kGlobalPool) {  // our loop where the family is dense over channels
      const memory::desc md = FamilyDesc(family, op.inputs[0]);
      if (!md.is_zero() && !LayoutFree(op.inputs[0]))
        if (auto own = GlobalPoolInFamily(op, md); own.ok()) return own;
    }
    if (op.kind == LayoutFamilyOp::Kind::kConcat && !op.ReadsRowMajorInputs()) {  // our copy loop where every value is dense in whole blocks
      std::vector<memory::desc> srcs;
      for (const auto& shape : op.inputs) srcs.push_back(FamilyDesc(family, shape));
      const memory::desc dst = FamilyDesc(family, op.output);
      const bool described = !dst.is_zero() && std::none_of(srcs.begin(), srcs.end(), [](const memory::desc& md) { return md.is_zero(); });
      if (described)
        if (auto own = ConcatInFamily(op, srcs, dst); own.ok()) return own;
    }
    if (op.kind == LayoutFamilyOp::Kind::kSlice) {  // our copy loop where the slice takes whole blocks of one axis
      const memory::desc src = FamilyDesc(family, op.inputs[0]), dst = FamilyDesc(family, op.output);
      if (!src.is_zero() && !dst.is_zero())
        if (auto own = SliceInFamily(op, src, dst); own.ok()) return own;
    }
    if (op.kind == LayoutFamilyOp::Kind::kPool) {  // our loop where the family is dense over channels
      const memory::desc src = FamilyDesc(family, op.inputs[0]), dst = FamilyDesc(family, op.output);
      if (!src.is_zero() && !dst.is_zero() && !LayoutFree(op.inputs[0]) && !LayoutFree(op.output))
        if (auto own = PoolInFamily(op, src, dst); own.ok()) return own;
    }
    auto kernel = std::make_unique<FamilyKernel>();
    kernel->Create(op, family);
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace tilebank::engine
