#include "engine/batch/shard_publish.h"

#include <filesystem>

#include "repo/bank.h"
#include "repo/bank_location.h"

namespace tilebank::engine {

namespace fs = std::filesystem;

namespace {

// Where a publish stages the new copy and puts the old one aside, beside the shared bank (not
// inside the shard directory's own listing of soc_versions: those are banks).
fs::path Staging(const fs::path& target) { return target.parent_path() / ".publish" / target.filename(); }
fs::path SetAside(const fs::path& target) { return target.parent_path() / ".published-old" / target.filename(); }

Status FsError(const std::string& what, const std::error_code& ec) { return Status::IoError(what + ": " + ec.message()); }

// A publish cut off after it set the old copy aside and before it renamed the new one in: the old
// copy goes back (the new one is staged again by the next publish).
Status CompleteCutOffPublish(const fs::path& target) {
  std::error_code ec;
  if (IsBankDir(target.string()) || !IsBankDir(SetAside(target).string())) return Status::Ok();
  fs::rename(SetAside(target), target, ec);
  return ec ? FsError("cannot restore the published bank " + target.string(), ec) : Status::Ok();
}

}  // namespace

Status PublishShardBank(const Bank& bank, const std::string& shared_bank_dir) {
  const fs::path target(shared_bank_dir), staging = Staging(target), aside = SetAside(target);
  TB_RETURN_IF_ERROR(CompleteCutOffPublish(target));
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (ec) return FsError("cannot clear " + staging.string(), ec);
  TB_RETURN_IF_ERROR(bank.CopyTo(staging.string(), /*compact=*/true));
  fs::remove_all(aside, ec);
  fs::create_directories(aside.parent_path(), ec);
  if (ec) return FsError("cannot create " + aside.parent_path().string(), ec);
  if (fs::exists(target, ec)) {
    fs::rename(target, aside, ec);
    if (ec) return FsError("cannot set aside " + target.string(), ec);
  }
  fs::rename(staging, target, ec);
  if (ec) return FsError("cannot rename " + staging.string() + " to " + target.string(), ec);
  fs::remove_all(aside, ec);  // a leftover is removed by the next publish
  return Status::Ok();
}

Status FetchShardBank(const std::string& shared_bank_dir, const std::string& local_bank_dir) {
  const fs::path target(shared_bank_dir), local(local_bank_dir);
  TB_RETURN_IF_ERROR(CompleteCutOffPublish(target));
  std::error_code ec;
  fs::remove_all(local, ec);
  if (ec) return FsError("cannot clear the local bank " + local.string(), ec);
  if (!IsBankDir(target.string())) return Status::Ok();
  fs::create_directories(local, ec);
  if (ec) return FsError("cannot create the local bank directory " + local.string(), ec);
  fs::copy_file(target / "data.mdb", local / "data.mdb", ec);
  return ec ? FsError("cannot copy the published bank " + target.string() + " to " + local.string(), ec) : Status::Ok();
}

}  // namespace tilebank::engine
