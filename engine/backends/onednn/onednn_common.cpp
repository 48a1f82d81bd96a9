#include "engine/backends/onednn/onednn_common.h"

#include <sstream>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

namespace tilebank::engine {

dnnl::engine& OneDnnCpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

const std::string& OneDnnVersionText() {
  static const std::string text = [] {
    const dnnl_version_t* v = dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + " " + (v->hash ? v->hash : "") + " isa " +
           std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa()));
  }();
  return text;
}

dnnl::memory::desc RowMajorDesc(const std::vector<int64_t>& shape) {
  dnnl::memory::dims dims(shape.begin(), shape.end()), strides(shape.size());
  if (dims.empty()) dims = {1}, strides = {1};
  dnnl::memory::dim stride = 1;
  for (size_t i = dims.size(); i-- > 0;) strides[i] = stride, stride *= dims[i];
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

std::string OneDnnIdentity(const std::string& what, const std::string& impl, const std::vector<dnnl::memory::desc>& mds,
                           const std::vector<std::string>& steps) {
  std::string id = "onednn " + what + "|" + impl;
  for (const dnnl::memory::desc& md : mds) {
    const HandoverLayout layout = HandoverLayoutOf(md);
    id += "|" + (layout.row_major() ? std::string("row-major") : layout.key);  // a bf16 operand's key ends in its type
  }
  for (const std::string& step : steps) id += "+" + step;
  return id;
}

HandoverLayout HandoverLayoutOf(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  const std::string type = d.data_type == dnnl_f32 ? "" : kHandoverTypeMark + std::to_string(static_cast<int>(d.data_type));
  const int64_t floats = static_cast<int64_t>((md.get_size() + sizeof(float) - 1) / sizeof(float));
  if (d.format_kind != dnnl_blocked) return {"onednn:format_kind=" + std::to_string(d.format_kind) + type, "opaque", floats, d.data_type == dnnl_bf16};
  const auto& b = d.format_desc.blocking;
  const int n = d.ndims;
  bool row_major = type.empty() && b.inner_nblks == 0 && d.offset0 == 0;  // a bf16 tensor is never the executor's row-major
  int64_t stride = 1;
  for (int i = n; i-- > 0 && row_major;) {
    row_major = d.padded_dims[i] == d.dims[i] && (d.dims[i] == 1 || b.strides[i] == stride);
    stride *= d.dims[i];
  }
  if (row_major) return {};
  std::string key = "onednn:";
  for (int i = 0; i < n; ++i)
    key += std::to_string(d.dims[i]) + "/" + std::to_string(d.padded_dims[i]) + "/" + std::to_string(d.padded_offsets[i]) + "/" +
           std::to_string(b.strides[i]) + ",";
  key += "o" + std::to_string(d.offset0) + ";";
  for (int k = 0; k < b.inner_nblks; ++k) key += std::to_string(b.inner_blks[k]) + "@" + std::to_string(b.inner_idxs[k]) + ",";
  // The name: dimensions outermost first, upper case where blocked, then the blocks (nChw16c).
  const std::string letters = n == 4 ? "nchw" : n == 5 ? "ncdhw" : std::string("abcdefghijkl").substr(0, n);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string name;
  for (int i : order) {
    bool blocked = false;
    for (int k = 0; k < b.inner_nblks; ++k) blocked |= b.inner_idxs[k] == i;
    name += blocked ? static_cast<char>(letters[i] - 'a' + 'A') : letters[i];
  }
  for (int k = 0; k < b.inner_nblks; ++k) name += std::to_string(b.inner_blks[k]) + letters[b.inner_idxs[k]];
  if (!type.empty()) name += d.data_type == dnnl_bf16 ? " bf16" : " dt" + std::to_string(static_cast<int>(d.data_type));
  return {key + type, name, floats, d.data_type == dnnl_bf16};
}

std::optional<dnnl::memory::desc> DescOfHandover(const HandoverLayout& layout, const std::vector<int64_t>& shape) {
  if (layout.row_major()) return RowMajorDesc(shape);
  const std::string prefix = "onednn:";
  if (layout.key.rfind(prefix, 0) != 0 || shape.empty() || shape.size() > DNNL_MAX_NDIMS) return std::nullopt;
  dnnl_memory_desc_t d{};
  d.ndims = static_cast<int>(shape.size());
  d.data_type = dnnl_f32;
  d.format_kind = dnnl_blocked;
  auto& b = d.format_desc.blocking;
  std::string blocking = layout.key.substr(prefix.size());
  if (const size_t mark = blocking.find(kHandoverTypeMark); mark != std::string::npos) {  // another element type than float32
    d.data_type = static_cast<dnnl_data_type_t>(std::stoi(blocking.substr(mark + std::strlen(kHandoverTypeMark))));
    blocking.resize(mark);
  }
  std::istringstream in(blocking);
  char sep = 0;
  for (int i = 0; i < d.ndims; ++i) {  // dims/padded/padded_offset/stride,
    if (!(in >> d.dims[i] >> sep >> d.padded_dims[i] >> sep >> d.padded_offsets[i] >> sep >> b.strides[i] >> sep) || d.dims[i] != shape[i])
      return std::nullopt;
  }
  if (!(in >> sep >> d.offset0 >> sep) || sep != ';') return std::nullopt;  // o<offset0>;
  int64_t block = 0, index = 0;
  while (b.inner_nblks < DNNL_MAX_NDIMS && in >> block >> sep >> index >> sep) {  // block@index,
    b.inner_blks[b.inner_nblks] = block;
    b.inner_idxs[b.inner_nblks] = index;
    ++b.inner_nblks;
  }
  return dnnl::memory::desc(d);
}

dnnl::memory MemoryFromTensor(const Tensor& t, const dnnl::memory::desc& md) {
  dnnl::memory m(md, OneDnnCpuEngine());
  std::memcpy(m.get_data_handle(), t.data.data(), t.data.size() * sizeof(float));
  return m;
}

Tensor TensorFromMemory(const dnnl::memory& m, const std::vector<int64_t>& shape) {
  Tensor t(shape);
  std::memcpy(t.data.data(), m.get_data_handle(), t.data.size() * sizeof(float));
  return t;
}

dnnl::algorithm OneDnnBinaryAlgorithm(const std::string& op_type) {
  static const std::map<std::string, dnnl::algorithm> algorithms = {
      {"Add", dnnl::algorithm::binary_add}, {"Sub", dnnl::algorithm::binary_sub}, {"Mul", dnnl::algorithm::binary_mul}, {"Div", dnnl::algorithm::binary_div}};
  return algorithms.at(op_type);
}

bool IsReferenceImplementation(const dnnl::primitive_desc_base& pd) { return std::string(pd.impl_info_str()).rfind("ref", 0) == 0; }

Status RefuseReference(const dnnl::primitive_desc_base& pd) {
  if (IsReferenceImplementation(pd)) return Status::Refused("oneDNN has only its reference kernel here (" + std::string(pd.impl_info_str()) + ")");
  return Status::Ok();
}

void ExecuteAndWait(const dnnl::primitive& prim, dnnl::stream& stream, const std::unordered_map<int, dnnl::memory>& args) {
  prim.execute(stream, args);
  stream.wait();
}

dnnl::memory::dims ConvWeightDims(const ConvProblem& p) {
  return p.G == 1 ? dnnl::memory::dims{p.OC, p.Cg, p.KH, p.KW} : dnnl::memory::dims{p.G, p.OCg, p.Cg, p.KH, p.KW};
}

dnnl::convolution_forward::desc ConvDesc(const ConvProblem& p, const std::string& algo, const std::string& layout, bool bf16,
                                         const dnnl::memory::desc* dst_given) {
  using memory = dnnl::memory;
  using tag = memory::format_tag;
  const memory::data_type f32 = memory::data_type::f32, operands = bf16 ? memory::data_type::bf16 : f32;
  const memory::dims src{p.N, p.C, p.H, p.W}, dst{p.N, p.OC, p.OH, p.OW};
  const tag activations = layout == "plain" ? tag::nchw : layout == "nhwc" ? tag::nhwc : tag::any;
  const memory::desc src_md(src, operands, activations), wts_md(ConvWeightDims(p), operands, tag::any),
      dst_md = dst_given ? *dst_given : memory::desc(dst, f32, activations);
  const auto a = algo == "winograd" ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
  const memory::dims strides{p.sh, p.sw}, dilates{p.dh - 1, p.dw - 1}, pads{p.ph, p.pw}, pads_end{p.ph_end, p.pw_end};
  if (p.bias)
    return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, a, src_md, wts_md, memory::desc({p.OC}, f32, tag::a), dst_md, strides,
                                           dilates, pads, pads_end);
  return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, a, src_md, wts_md, dst_md, strides, dilates, pads, pads_end);
}

dnnl::memory::desc WithF32(const dnnl::memory::desc& md) {
  dnnl_memory_desc_t d = md.data;
  d.data_type = dnnl_f32;
  return dnnl::memory::desc(d);
}

dnnl::memory::desc WithBf16(const dnnl::memory::desc& md) {
  dnnl_memory_desc_t d = md.data;
  d.data_type = dnnl_bf16;
  return dnnl::memory::desc(d);
}

bool NativeBf16Implementation(const std::string& impl_name) {
  // oneDNN emulates bf16 on AVX-512 CPUs without it (slower than float32): the host's ISA decides,
  // as ONEDNN_MAX_CPU_ISA limits it (TILEBANK_ISA=avx2 sets that).
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  const bool host = isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
  return host && impl_name.rfind("ref", 0) != 0 && (impl_name.find("bf16") != std::string::npos || impl_name.find("amx") != std::string::npos);
}

}  // namespace tilebank::engine
