// Small ONNX models written with ONNX's protobuf classes, for the tests of the executor and of
// model tuning: inputs, outputs with their shapes, random float32 weights, int64 constants, nodes.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/core/tensor.h"

namespace tilebank::testing {

// A model written with ONNX's protobuf classes, opset 17.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* g;
  std::mt19937 rng{7};

  ModelBuilder() {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    g = model.mutable_graph();
    g->set_name("test");
  }
  static void SetShape(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& shape, int type = onnx::TensorProto::FLOAT) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* s = tt->mutable_shape();
    for (int64_t d : shape)  // a negative size is a dynamic dimension, named "dim<-d>"
      if (d < 0) s->add_dim()->set_dim_param("dim" + std::to_string(-d));
      else s->add_dim()->set_dim_value(d);
  }
  void Input(const std::string& name, const std::vector<int64_t>& shape) { SetShape(g->add_input(), name, shape); }
  void Output(const std::string& name, const std::vector<int64_t>& shape) { SetShape(g->add_output(), name, shape); }
  std::vector<float> Weight(const std::string& name, const std::vector<int64_t>& shape) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> values(engine::Tensor::NumElements(shape));
    for (auto& v : values) v = d(rng);
    for (int64_t s : shape) t->add_dims(s);
    for (float v : values) t->add_float_data(v);
    return values;
  }
  // A float initializer of `shape` holding `values` (a scalar: shape {}).
  void Floats(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  void Ints(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  // Moves initializer `index`'s data out of the model: its bytes are to be found in `location`
  // (written by the caller, or not), with any further external_data fields given as key, value.
  onnx::TensorProto* MakeExternal(int index, const std::string& location, const std::vector<std::pair<std::string, std::string>>& fields = {}) {
    auto* w = g->mutable_initializer(index);
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = w->add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    for (const auto& [key, value] : fields) {
      entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    return w;
  }
  onnx::NodeProto* Node(const std::string& type, const std::vector<std::string>& in, const std::vector<std::string>& out) {
    auto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(type + "_" + out[0]);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  // Sets an integer attribute of `node`; returns the node.
  static onnx::NodeProto* IntAttr(onnx::NodeProto* node, const std::string& name, int64_t value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
    return node;
  }
  // Sets an integer-list attribute of `node`; returns the node.
  static onnx::NodeProto* IntsAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
    return node;
  }
  // Sets a string attribute of `node`; returns the node.
  static onnx::NodeProto* StrAttr(onnx::NodeProto* node, const std::string& name, const std::string& value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
    return node;
  }
  // Writes the model to `path`; with TILEBANK_FUZZ_SEED_DIR set, a copy goes there too, named by
  // its bytes (how fuzz/corpus/onnx_import_fuzz/ is made: the models the tests build).
  std::string Save(const std::string& path) {
    const std::string bytes = model.SerializeAsString();
    std::ofstream(path, std::ios::binary) << bytes;
    if (const char* seeds = std::getenv("TILEBANK_FUZZ_SEED_DIR"); seeds && *seeds) {
      char name[32];
      std::snprintf(name, sizeof name, "%016zx.onnx", std::hash<std::string>{}(bytes));
      std::ofstream(std::string(seeds) + "/" + name, std::ios::binary) << bytes;
    }
    return path;
  }
};

// MobileNetV2's inverted residual block without its residual Add: x [1, 64, 14, 14] -> 1x1 Conv
// 64->96 + Relu -> depthwise 3x3 Conv 96 + Clip(0, 6) -> 1x1 Conv 96->64 -> y. The nodes write c0,
// r0, c1, r1 and y; the weights' second dimensions tell the convolutions apart (64, 1, 96).
inline std::string SaveInvertedResidual(const std::string& path) {
  ModelBuilder b;
  b.Input("x", {1, 64, 14, 14});
  b.Weight("w0", {96, 64, 1, 1});
  b.Weight("w1", {96, 1, 3, 3});
  b.Weight("w2", {64, 96, 1, 1});
  b.Node("Conv", {"x", "w0"}, {"c0"});
  b.Node("Relu", {"c0"}, {"r0"});
  ModelBuilder::IntAttr(ModelBuilder::IntsAttr(b.Node("Conv", {"r0", "w1"}, {"c1"}), "pads", {1, 1, 1, 1}), "group", 96);
  b.Floats("lo", {}, {0.f});
  b.Floats("hi", {}, {6.f});
  b.Node("Clip", {"c1", "lo", "hi"}, {"r1"});
  b.Node("Conv", {"r1", "w2"}, {"y"});
  b.Output("y", {1, 64, 14, 14});
  return b.Save(path);
}

// A squeeze-excitation between two 1x1 convolutions, as EfficientNet-B0's blocks have it: Conv
// [96, 32] then Swish (x * Sigmoid(x), 96x32x32 values: in float32 an own pass after the
// convolution), its global average pool's Sigmoid scaling it per channel, then Conv [32, 96].
inline std::string SaveSqueezeExcitation(const std::string& path) {
  ModelBuilder b;
  b.Input("x", {1, 32, 32, 32});
  b.Weight("w0", {96, 32, 1, 1});
  b.Weight("w1", {32, 96, 1, 1});
  b.Node("Conv", {"x", "w0"}, {"c0"});
  b.Node("Sigmoid", {"c0"}, {"g0"});
  b.Node("Mul", {"c0", "g0"}, {"e0"});
  b.Node("GlobalAveragePool", {"e0"}, {"p"});
  b.Node("Sigmoid", {"p"}, {"s"});
  b.Node("Mul", {"e0", "s"}, {"m"});
  b.Node("Conv", {"m", "w1"}, {"y"});
  b.Output("y", {1, 32, 32, 32});
  return b.Save(path);
}

}  // namespace tilebank::testing
