#include "engine/jobs/stored_job.h"

#include <optional>

namespace tilebank::engine {

Result<std::pair<std::string, std::string>> ReadStoredJob(Bank& bank, const std::string& requested, const char* latest_key,
                                                          const std::string& kind, const std::string& bank_dir) {
  std::string name = requested;
  std::optional<std::string> stored;
  TB_RETURN_IF_ERROR(bank.Write([&](WriteTxn& txn) -> Status {
    if (name.empty()) {
      auto latest = txn.GetJob(latest_key);
      if (!latest.ok()) return latest.status();
      if (!*latest) return Status::NotFound("--reload: no " + kind + " has been checkpointed in " + bank_dir);
      name = **latest;
    }
    auto job = txn.GetJob(name);
    if (!job.ok()) return job.status();
    if (!*job) return Status::NotFound("--reload: no job named '" + name + "' in " + bank_dir);
    stored = **job;
    return Status::Ok();
  }, /*commit=*/false));
  return std::pair<std::string, std::string>(name, *stored);
}

Result<std::optional<std::pair<std::string, std::string>>> PeekLatestJob(const Bank& bank, const char* latest_key) {
  using Found = std::optional<std::pair<std::string, std::string>>;
  auto view = bank.Read();
  if (!view.ok()) return view.status();
  auto latest = view->GetJob(latest_key);
  if (!latest.ok()) return latest.status();
  if (!*latest) return Found();
  auto job = view->GetJob(**latest);
  if (!job.ok()) return job.status();
  if (!*job) return Found();
  return Found(std::make_pair(**latest, **job));
}

}  // namespace tilebank::engine
