// `tilebank quantize`: static (or, with `dynamic`, dynamic) post-training quantization of a float ONNX model into a QDQ model any
// runtime reads (ONNX Runtime, TensorRT, tilebank's int8 kernels through engine/passes/qdq_fusion.h).
//   - BatchNormalization after a Conv folded into its weights and bias;
//   - the weights of each Conv, MatMul and Gemm as int8, symmetric, one scale per output channel,
//     behind a DequantizeLinear;
//   - each such operator's activation input and its output (after a Relu or a bias Add that follows
//     it) as uint8 with a scale and zero point, a QuantizeLinear/DequantizeLinear pair, the range
//     chosen per tensor from the calibration inputs' histogram (calibration.h);
//   - each output's SQNR against the float model over the calibration inputs.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "engine/quantize/calibration.h"
#include "base/status.h"

namespace tilebank::engine::quantize {

struct QuantizeOptions {
  std::string model_path, output_path;
  std::string calibrate_dir;  // ONNX test data: input_<i>.pb here, or in each subdirectory (test_data_set_*)
  RangeMethod method = RangeMethod::kAuto;
  size_t max_samples = 100;   // calibration input sets read at most
  // Dynamic quantization instead (MatMul-heavy models): each MatMul and Gemm with constant weights
  // becomes DynamicQuantizeLinear -> MatMulInteger (int8 weights per column) -> Cast -> Mul by the
  // scales, as ONNX Runtime's dynamic quantizer writes it; activations need no calibration
  // (calibrate_dir may be empty: the SQNR is then measured on 4 random input sets).
  bool dynamic = false;
};

struct QuantizeReport {
  size_t quantized_ops = 0, folded_batchnorms = 0, samples = 0;
  std::map<std::string, size_t> ranges_by_method;  // how many activation ranges each method chose
  struct Output {
    std::string name;
    double sqnr_db = 0;  // 10 log10(sum x^2 / sum (x - x_q)^2) over every calibration input
  };
  std::vector<Output> outputs;
};

// kInvalidInput / kNotFound naming the model, the calibration directory or the tensor at fault;
// nothing is written unless the whole model quantized and ran.
Result<QuantizeReport> QuantizeModel(const QuantizeOptions& options);

}  // namespace tilebank::engine::quantize
