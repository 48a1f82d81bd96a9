// A dense fp32 tensor in row-major order (the layout ONNX and ATC describe shapes in).
#pragma once
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

namespace tilebank::engine {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> dims) : shape(std::move(dims)), data(static_cast<size_t>(NumElements(shape))) {}

  static int64_t NumElements(const std::vector<int64_t>& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  int rank() const { return static_cast<int>(shape.size()); }
};

}  // namespace tilebank::engine
