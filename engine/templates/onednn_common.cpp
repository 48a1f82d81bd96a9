#include "engine/templates/onednn_common.h"

#include <cstring>

namespace tilebank::engine {

dnnl::engine& OneDnnCpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::memory::desc RowMajorDesc(const std::vector<int64_t>& shape) {
  dnnl::memory::dims dims(shape.begin(), shape.end()), strides(shape.size());
  if (dims.empty()) dims = {1}, strides = {1};
  dnnl::memory::dim stride = 1;
  for (size_t i = dims.size(); i-- > 0;) strides[i] = stride, stride *= dims[i];
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
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

void ExecuteAndWait(const dnnl::primitive& prim, dnnl::stream& stream, const std::unordered_map<int, dnnl::memory>& args) {
  prim.execute(stream, args);
  stream.wait();
}

}  // namespace tilebank::engine
