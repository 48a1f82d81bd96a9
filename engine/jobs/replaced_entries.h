// The entries a tuning job replaced in its bank, kept in the job's checkpoint (in the transaction
// that replaced them) so that the job can take them back when the model it tuned is slower with
// them: key text -> the entry before the job (nullopt: the job added the key).
#pragma once
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "repo/bank.h"
#include "repo/entry.h"

namespace tilebank::engine {

using ReplacedEntries = std::map<std::string, std::optional<Entry>>;

nlohmann::json ReplacedToJson(const ReplacedEntries& replaced);
// `context` names the checkpoint in messages.
Result<ReplacedEntries> ReplacedFromJson(const nlohmann::json& j, const std::string& context);

// Puts back the entries of `kind` a job replaced and removes those it added, in `txn`.
Status TakeBack(WriteTxn& txn, EntryKind kind, const ReplacedEntries& replaced);

}  // namespace tilebank::engine
