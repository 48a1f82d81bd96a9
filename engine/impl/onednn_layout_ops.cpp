#include "engine/impl/onednn_layout_ops.h"

#include "engine/impl/onednn_common.h"
#include "engine/impl/onednn_vector_ops.h"

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

// The descriptor of `shape` in `family`; a zero descriptor when there is none.
memory::desc FamilyDesc(const std::string& family, const std::vector<int64_t>& shape) {
  for (tag t : FamilyTags(shape.size())) {
    memory::desc md(memory::dims(shape.begin(), shape.end()), memory::data_type::f32, t);
    const HandoverLayout layout = HandoverLayoutOf(md);
    if (!layout.row_major() && layout.name == family) return md;
  }
  return memory::desc();
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
    for (const auto& shape : op.inputs) srcs.push_back(FamilyDesc(family, shape));
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
      case LayoutFamilyOp::Kind::kPool: {
        auto pd = OneDnnPoolingPrimitive(op.pool, srcs[0], dst);
        prim_ = dnnl::pooling_v2_forward(pd);
        Bind(DNNL_ARG_SRC, srcs[0]);
        if (pd.scratchpad_desc().get_size() > 0) args_[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), engine);
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
  }

 private:
  static Status Unsupported() { return Status::InvalidInput("a layout-family kernel runs only on a model's direct path"); }
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
    auto kernel = std::make_unique<FamilyKernel>();
    kernel->Create(op, family);
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace tilebank::engine
