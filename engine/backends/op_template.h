// A schedule template (or a library implementation) for a family of operators: which op
// instances it can run, the knobs that form its search space, an analytical default policy, and
// how a policy becomes a runnable kernel. Templates are stateless; ids and versions live in
// engine/core/template_catalog.cpp, and which templates run an op in
// engine/kernels/kernel_registry.h (tunable implementations).
#pragma once
#include <memory>
#include <string>

#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"
#include "engine/core/search_space.h"

namespace tilebank::engine {

class OpTemplate {
 public:
  virtual ~OpTemplate() = default;
  virtual const char* id() const = 0;
  uint32_t version() const;
  // The (ONNX) op types this template is written for.
  virtual std::vector<std::string> OpTypes() const = 0;
  bool Implements(const std::string& op_type) const;
  // Ok when this template runs the op instance; otherwise a message saying why not (the op type,
  // or what of this instance it does not handle).
  Status Supports(const OpSpec& op) const;
  // Library implementations have an empty space: their one policy is the default.
  virtual SearchSpace Space(const OpSpec& op) const = 0;
  virtual Policy DefaultPolicy(const OpSpec& op) const = 0;
  // Compiles (or fetches from the compile cache) the kernel for `policy`; a compile error is a
  // non-ok result, never a crash.
  virtual Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy& policy) const = 0;

 protected:
  // Supports() for an op whose type this template implements.
  virtual Status SupportsInstance(const OpSpec& op) const = 0;
};

struct HalideProgram;

// Base for Halide templates: Build() goes through the shared compile cache.
class HalideTemplate : public OpTemplate {
 public:
  Result<std::unique_ptr<Kernel>> Build(const OpSpec& op, const Policy& policy) const override;

 protected:
  // The pipeline for this op and policy (may throw Halide::Error: reported as a compile error).
  virtual HalideProgram Define(const OpSpec& op, const Policy& policy) const = 0;
};

}  // namespace tilebank::engine
