// The jobs database of a bank, as `tune --reload [JOB]` reads it: a job's checkpoint text, by name
// or through the key naming the latest job of its kind.
#pragma once
#include <string>
#include <utility>

#include "repo/bank.h"

namespace tilebank::engine {

// The checkpoint of job `requested`, or of the job `latest_key` names when `requested` is empty:
// {job name, stored text}. kNotFound saying "no <kind> has been checkpointed in <bank_dir>" or
// "no job named ..." (`kind`: "tuning job", "subgraph tuning job").
Result<std::pair<std::string, std::string>> ReadStoredJob(Bank& bank, const std::string& requested, const char* latest_key,
                                                          const std::string& kind, const std::string& bank_dir);

// The job `latest_key` names, read without a write transaction (a reader beside a running job):
// {job name, stored text}, or nullopt when no such job has been checkpointed.
Result<std::optional<std::pair<std::string, std::string>>> PeekLatestJob(const Bank& bank, const char* latest_key);

}  // namespace tilebank::engine
