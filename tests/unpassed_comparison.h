// What the tests of the graph passes share: a model loaded with every pass against the same model
// imported with none, run on the same random inputs.
#pragma once
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine/ir/onnx_import.h"
#include "engine/runtime/model_session.h"

namespace tilebank::engine::model {

// The model's outputs with every pass (LoadModel) and with none (the graph as imported).
inline void CompareWithUnpassed(const std::string& path, std::unique_ptr<Executor>* passed) {
  auto e = LoadModel(path, {}, nullptr);
  REQUIRE_MESSAGE(e.ok(), e.status().message());
  auto imported = ImportOnnx(path, {}, {});
  REQUIRE_MESSAGE(imported.ok(), imported.status().message());
  auto plain = BindToBank(std::move(imported.value()), nullptr);
  REQUIRE_MESSAGE(plain.ok(), plain.status().message());
  const std::vector<Tensor> inputs = RandomInputs((*e)->graph(), 5);
  std::vector<Tensor> got, want;
  REQUIRE((*e)->Run({&inputs[0]}, &got).ok());
  REQUIRE((*plain)->Run({&inputs[0]}, &want).ok());
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) CHECK(got[k].shape == want[k].shape);
  const Comparison compared = CompareTensors(got, want);
  CHECK_MESSAGE(compared.ok, compared.worst);
  *passed = std::move(e.value());
}

}  // namespace tilebank::engine::model
