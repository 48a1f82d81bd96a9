// `tilebank quantize`: a float ONNX model to a QDQ model (engine/quantize/static_quantizer.h), with
// each output's SQNR against the float model printed.
#include <cmath>
#include <iostream>

#include "engine/quantize/static_quantizer.h"
#include "tools/cli_common.h"

namespace tilebank::cli {

namespace {

struct QuantizeFlags {
  std::string model, calibrate, output, method = "auto";
  size_t samples = 100;
  bool dynamic = false;
};

int RunQuantize(const QuantizeFlags& f) {
  if (!f.dynamic && f.calibrate.empty())
    return Fail(Status::InvalidInput("--calibrate DIR is required for static quantization (or give --dynamic)"));
  engine::quantize::QuantizeOptions o;
  o.dynamic = f.dynamic;
  o.model_path = f.model;
  o.output_path = f.output;
  o.calibrate_dir = f.calibrate;
  o.max_samples = f.samples;
  if (!engine::quantize::ParseRangeMethod(f.method, &o.method))
    return Fail(Status::InvalidInput("--method " + f.method + ": expected auto, minmax, percentile or entropy"));
  if (f.samples < 1) return Fail(Status::InvalidInput("--samples must be at least 1"));
  auto report = engine::quantize::QuantizeModel(o);
  if (!report.ok()) return Fail(report.status());
  std::printf(f.dynamic ? "quantized %zu operators dynamically (int8 weights per column, activations quantized per run)"
                        : "quantized %zu operators (int8 weights per channel, uint8 activations)",
              report->quantized_ops);
  if (report->folded_batchnorms) std::printf(", %zu BatchNormalization folded", report->folded_batchnorms);
  if (report->samples) std::printf("; %zu calibration input sets", report->samples);
  else std::printf("; the SQNR below is over 4 random input sets");
  if (!report->ranges_by_method.empty()) {
    std::printf("\nactivation ranges:");
    for (const auto& [method, count] : report->ranges_by_method) std::printf(" %s %zu", method.c_str(), count);
  }
  std::printf("\n");
  for (const auto& out : report->outputs) std::printf("output %s: SQNR %.1f dB against the float model\n", out.name.c_str(), out.sqnr_db);
  std::printf("wrote %s\n", f.output.c_str());
  return kExitOk;
}

}  // namespace

void RegisterQuantizeCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<QuantizeFlags>();
  CLI::App* q = app->add_subcommand("quantize", "static post-training quantization of a float ONNX model into a QDQ model (int8 weights, uint8 activations)");
  q->add_option("-m,--model", flags->model, "the float ONNX model")->required();
  q->add_option("--calibrate", flags->calibrate,
                "calibration inputs: ONNX test data (input_<i>.pb here or in test_data_set_* subdirectories); with --dynamic, only for the SQNR");
  q->add_option("-o,--output", flags->output, "the QDQ model to write")->required();
  q->add_option("--method", flags->method, "activation ranges: auto (per tensor, the least quantization error), minmax, percentile, entropy")
      ->capture_default_str();
  q->add_option("--samples", flags->samples, "calibration input sets read at most")->capture_default_str();
  q->add_flag("--dynamic", flags->dynamic,
              "dynamic quantization of MatMul and Gemm (DynamicQuantizeLinear + MatMulInteger, int8 weights per column): no calibration");
  q->callback([flags, exit_code] { *exit_code = RunQuantize(*flags); });
}

}  // namespace tilebank::cli
