// Small ONNX models written with ONNX's protobuf classes, for the tests of the executor and of
// model tuning: inputs, outputs with their shapes, random float32 weights, int64 constants, nodes.
#pragma once
#include <onnx/onnx_pb.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/ops/tensor.h"

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
    for (int64_t d : shape) s->add_dim()->set_dim_value(d);
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
  void Ints(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* Node(const std::string& type, const std::vector<std::string>& in, const std::vector<std::string>& out) {
    auto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(type + "_" + out[0]);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  std::string Save(const std::string& path) {
    std::ofstream f(path, std::ios::binary);
    model.SerializeToOstream(&f);
    return path;
  }
};

}  // namespace tilebank::testing
