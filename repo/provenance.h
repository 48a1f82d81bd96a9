// Where and when: the host name and wall-clock time recorded in banks and entries.
#pragma once
#include <cstdint>
#include <string>

namespace tilebank {

std::string HostName();
int64_t NowUnixMs();  // milliseconds since the Unix epoch

struct Entry;
// Stamps an entry a job is about to store: now, this tool's version, this host, and `bank_id`
// (the bank it is tuned into).
void StampProvenance(Entry* entry, const std::string& bank_id);

}  // namespace tilebank
