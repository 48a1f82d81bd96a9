#include "engine/jobs/job_types.h"

namespace tilebank::engine {

const std::vector<JobType>& JobTypes() {
  static const std::vector<JobType> kTypes = {
      {2, "OPAT", "operator tuning", "opat", "latest", "operator", "description", "ops.json", "operators", true, true,
       {"--model M.onnx", "--singleop OPS.json"}, {"--tune-ops-file", "--tune-mode", "--modes", "--precision-mode"}},
      {1, "SGAT", "subgraph tuning", "sgat", "latest-sgat", "subgraph", "subgraph", "subgraphs.json", "subgraphs", true, true,
       {"--model M.onnx", "--subgraphs FILE (run --dump writes one)"}, {}},
      {4, "GDAT", "gradient fusion", "gdat", "latest-gdat-batch", "gradient", "profile", "gradients.json", "gradient problems", false, false,
       {"--gradients PROFILE.json (in a PyTorch job, TILEBANK_GDAT=tune records one and tunes live)"}, {"--measured", "--print-plans", "--max-segments"}},
  };
  return kTypes;
}

const JobType* FindJobType(int id) {
  for (const JobType& t : JobTypes())
    if (t.id == id) return &t;
  return nullptr;
}

const JobType& JobTypeOf(int id) {
  const JobType* t = FindJobType(id);
  return t ? *t : JobTypes().front();
}

const JobType* JobTypeOfResultKind(const std::string& result_kind) {
  for (const JobType& t : JobTypes())
    if (result_kind == t.result_kind) return &t;
  return nullptr;
}

std::string JobTypeChoices() {
  std::string text;
  const auto& types = JobTypes();
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) text += i + 1 == types.size() ? " or " : ", ";
    text += std::to_string(types[i].id) + " (" + types[i].name + ")";
  }
  return text;
}

}  // namespace tilebank::engine
