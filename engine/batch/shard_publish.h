// A worker that tunes in node-local storage (`tune --local-dir DIR`) and publishes its shard's bank
// to the shard's directory on shared storage after each task, so that LMDB never writes, maps or
// locks a bank on a network file system. A published bank is a whole LMDB copy taken between
// transactions, renamed into place: the shared directory holds the bank as it was after some task,
// never a partial one. The next worker of the shard (on any node) starts from the published copy.
#pragma once

#include <string>

#include "base/status.h"

namespace tilebank {
class Bank;
}

namespace tilebank::engine {

// Copies `bank` (open, no write transaction running) to `shared_bank_dir`, replacing what is there:
// the copy is written beside it (.publish/<name>) and renamed over it.
Status PublishShardBank(const Bank& bank, const std::string& shared_bank_dir);

// Makes `local_bank_dir` the published bank of `shared_bank_dir` (a plain file copy: the published
// bank is never written in place), or empty when none is published. A publish cut off between its
// two renames is completed first.
Status FetchShardBank(const std::string& shared_bank_dir, const std::string& local_bank_dir);

}  // namespace tilebank::engine
