// Z [rows, positions] = W^T X for weights W [C, rows] (row-major) known at load and X [C, positions]:
// the product ConvTranspose's GEMM-and-col2im makes per image. dnnl_sgemm packs the transposed
// weights on every call (DCGAN's 512 -> 256 layer, 8 MiB of weights: 509 us); here a oneDNN matmul of
// X^T by W holds W packed once (190 us), and its [positions, rows] result is transposed into Z by a
// oneDNN reorder (oneDNN's matmul writes a transposed destination only with its reference kernel).
#pragma once
#include <cstdint>
#include <memory>

#include "base/status.h"

namespace tilebank::engine {

class PackedTransposedGemm {
 public:
  // kInvalidInput where this oneDNN offers only its reference matmul for the shapes.
  static Result<std::unique_ptr<PackedTransposedGemm>> Make(int64_t C, int64_t rows, int64_t positions, const float* w);
  virtual ~PackedTransposedGemm() = default;
  // z [rows, positions] from x [C, positions]; `scratch` holds rows * positions floats (the product
  // before its transpose), the caller's, so that no kernel holds one between runs.
  virtual void Run(const float* x, float* z, float* scratch) = 0;
};

}  // namespace tilebank::engine
