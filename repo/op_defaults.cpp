#include "repo/op_defaults.h"

#include <map>

namespace tilebank {
namespace {

const std::map<std::string, std::string, std::less<>>& Aliases() {
  static const std::map<std::string, std::string, std::less<>> aliases = {
      {"MatMulV2", "MatMul"},          {"BatchMatMulV2", "BatchMatMul"},
      {"Conv2D", "Conv"},              {"DepthwiseConv2D", "Conv"},
      {"SoftmaxV2", "Softmax"},        {"LayerNorm", "LayerNormalization"},
      {"ReduceSumD", "ReduceSum"},     {"ReduceMeanD", "ReduceMean"},
      {"ReduceMaxD", "ReduceMax"},     {"RealDiv", "Div"},
      {"MaxPoolV3", "MaxPool"},        {"AvgPool", "AveragePool"},
      {"AvgPoolV2", "AveragePool"},    {"GlobalAvgPool", "GlobalAveragePool"},
      {"FastGelu", "Gelu"},
  };
  return aliases;
}

AttrSpec Int(const char* name, long long v) { return {name, AttrType::kInt, DefaultRule::kValue, v}; }
AttrSpec Real(const char* name, double v) { return {name, AttrType::kReal, DefaultRule::kValue, 0, v}; }
AttrSpec Text(const char* name, const char* v) { return {name, AttrType::kText, DefaultRule::kValue, 0, 0, v}; }
AttrSpec Ones(const char* name) { return {name, AttrType::kIntList, DefaultRule::kOnesSpatial}; }
AttrSpec Pads(const char* name) { return {name, AttrType::kIntList, DefaultRule::kZerosPads}; }
AttrSpec Axis(const char* name, long long v) {
  AttrSpec spec = Int(name, v);
  spec.is_axis = true;
  return spec;
}
AttrSpec Axes(const char* name) {
  AttrSpec spec{name, AttrType::kIntList, DefaultRule::kNone};
  spec.is_axis = true;
  return spec;
}
AttrSpec NoDefault(const char* name, AttrType type) { return {name, type, DefaultRule::kNone}; }

const std::map<std::string, std::vector<AttrSpec>, std::less<>>& Specs() {
  static const std::vector<AttrSpec> matmul = {Int("transpose_a", 0), Int("transpose_b", 0)};
  static const std::vector<AttrSpec> reduce = {Axes("axes"), Int("keepdims", 1), Int("noop_with_empty_axes", 0)};
  static const std::vector<AttrSpec> pool_common = {
      Text("auto_pad", "NOTSET"), Int("ceil_mode", 0), Ones("dilations"),
      NoDefault("kernel_shape", AttrType::kIntList), Pads("pads"), Ones("strides")};
  static const std::map<std::string, std::vector<AttrSpec>, std::less<>> specs = [&] {
    std::map<std::string, std::vector<AttrSpec>, std::less<>> m;
    m["MatMul"] = matmul;
    m["BatchMatMul"] = matmul;
    m["Gemm"] = {Real("alpha", 1.0), Real("beta", 1.0), Int("transA", 0), Int("transB", 0)};
    m["Conv"] = {Text("auto_pad", "NOTSET"), Ones("dilations"), Int("group", 1),
                 NoDefault("kernel_shape", AttrType::kIntList), Pads("pads"), Ones("strides")};
    m["Softmax"] = {Axis("axis", -1)};
    m["LogSoftmax"] = {Axis("axis", -1)};
    m["LayerNormalization"] = {Axis("axis", -1), Real("epsilon", 1e-5), Int("stash_type", 1)};
    m["ReduceSum"] = reduce;
    m["ReduceMean"] = reduce;
    m["ReduceMax"] = reduce;
    m["ReduceL2"] = reduce;
    m["Gelu"] = {Text("approximate", "none")};
    m["MaxPool"] = pool_common;
    m["MaxPool"].push_back(Int("storage_order", 0));
    m["AveragePool"] = pool_common;
    m["AveragePool"].push_back(Int("count_include_pad", 0));
    return m;
  }();
  return specs;
}

}  // namespace

std::string CanonicalOpType(std::string_view op_type) {
  auto it = Aliases().find(op_type);
  return it == Aliases().end() ? std::string(op_type) : it->second;
}

const std::vector<AttrSpec>& AttrSpecsOf(std::string_view canonical_op_type) {
  static const std::vector<AttrSpec> none;
  auto it = Specs().find(canonical_op_type);
  return it == Specs().end() ? none : it->second;
}

}  // namespace tilebank
