// A full check of one bank: meta (format, soc_version, generation), every value (checksum,
// FlatBuffers Verifier, kind), every key recomputed from its stored descriptor, descriptors in
// canonical form, the shape index, stale templates, and implausible measurements (zero or
// negative times, a stored winner slower than its baseline), and each live entry's policy against
// its template (`policy_check`, when given). An empty list means clean.
#pragma once
#include <string>
#include <vector>

#include "repo/bank.h"
#include "repo/policy_check.h"
#include "repo/template_versions.h"

namespace tilebank {

struct Problem {
  std::string where;  // "meta", "op 0x...", "history op 0x... r2", "shape index"
  std::string what;
};

Result<std::vector<Problem>> ValidateBank(const Bank& bank, const std::string& expected_soc,
                                          const TemplateVersions& current_versions, const PolicyCheck& policy_check = {});

// Why an entry is stale, or empty when it is current.
std::string StaleReason(const Entry& entry, const TemplateVersions& current_versions);

}  // namespace tilebank
