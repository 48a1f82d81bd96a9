#include "engine/catalog/op_list_check.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "engine/catalog/template_registry.h"
#include "engine/core/conv_problem.h"
#include "engine/backends/op_template.h"

namespace tilebank::engine {

namespace {

uint64_t Elements(const TensorDesc& t) {
  uint64_t n = 1;
  for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);  // ParseOpSpec bounds each tensor's size
  return n;
}

std::string GiB(uint64_t bytes) {
  std::ostringstream s;
  s.precision(bytes < (10ull << 30) ? 2 : 0);
  s << std::fixed << static_cast<double>(bytes) / (1ull << 30) << " GiB";
  return s.str();
}

// The templates' messages start with the op's name ("mm (MatMul): ...", "mm: ..."), which `where` already says.
std::string WithoutOpPrefix(const std::string& message, const OpSpec& op) {
  for (const std::string& prefix : {op.name + " (" + op.op_type + "): ", op.name + ": "})
    if (message.rfind(prefix, 0) == 0) return message.substr(prefix.size());
  return message;
}

std::string SupportedTypesText() {
  std::string text;
  for (const auto& t : SupportedOpTypes()) text += (text.empty() ? "" : ", ") + t;
  return text;
}

}  // namespace

uint64_t EstimatedRunBytes(const OpSpec& op) {
  uint64_t in = 0, out = 0;
  for (const auto& t : op.inputs) in += Elements(t);
  for (const auto& t : op.outputs) out += Elements(t);
  uint64_t floats = 2 * in + 3 * out;  // inputs and a packed copy; kernel, default and reference outputs
  if (op.op_type == "Conv") {
    auto p = AnalyzeConv(op);
    if (p.ok()) floats += static_cast<uint64_t>(p->N) * p->G * p->Cg * p->KH * p->KW * p->OH * p->OW;  // im2col columns
  }
  return floats * sizeof(float);
}

uint64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string field, unit;
  uint64_t kib = 0;
  while (meminfo >> field >> kib >> unit)
    if (field == "MemAvailable:") return kib * 1024;
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
}

Status CheckOpList(const std::string& path, const std::vector<OpSpec>& ops) {
  const uint64_t available = AvailableMemoryBytes();
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpSpec& op = ops[i];
    const std::string where = path + ": op " + std::to_string(i) + " (" + op.name + ", " + op.op_type + ")";
    if (!Implements(op.op_type))
      return Status::InvalidInput(where + ": \"op\": no template implements " + op.op_type + " (supported: " + SupportedTypesText() + ")");
    auto templates = TemplatesFor(op);
    if (!templates.ok()) return Status::InvalidInput(where + ": " + WithoutOpPrefix(templates.status().message(), op));
    const uint64_t needed = EstimatedRunBytes(op);
    if (needed > available)
      return Status::InvalidInput(where + ": input_desc/output_desc shapes need about " + GiB(needed) +
                                  " to tune, and this machine has " + GiB(available) + " available");
  }
  return Status::Ok();
}

}  // namespace tilebank::engine
