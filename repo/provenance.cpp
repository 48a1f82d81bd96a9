#include "repo/provenance.h"

#include <unistd.h>

#include <chrono>

#include "repo/entry.h"

namespace tilebank {

std::string HostName() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void StampProvenance(Entry* entry, const std::string& bank_id) {
  entry->created_unix_ms = NowUnixMs();
  entry->tool_version = std::string("tilebank ") + TILEBANK_VERSION;
  entry->origin_host = HostName();
  entry->origin_bank = bank_id;
}

}  // namespace tilebank
