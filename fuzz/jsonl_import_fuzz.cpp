// libFuzzer target: the JSON Lines importer (parsing, field checks, canonicalization of raw
// descriptions), then the encode/decode and export/import round trips of whatever it accepts.
#include <cstdint>
#include <sstream>
#include <string>

#include "repo/entry_codec.h"
#include "repo/entry_json.h"
#include "repo/jsonl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto parsed = tilebank::ParseJsonl(in, "fuzz.jsonl");
  if (!parsed.ok()) return 0;
  for (const tilebank::Entry& e : parsed->entries) {
    const std::string stored = tilebank::EncodeEntry(e);
    auto back = tilebank::DecodeEntry(stored);
    if (!back.ok() || tilebank::EncodeEntry(*back) != stored) __builtin_trap();
    auto again = tilebank::EntryFromJson(tilebank::EntryToJson(e));
    if (again.ok() && tilebank::EntryToJson(*again) != tilebank::EntryToJson(e)) __builtin_trap();
  }
  return 0;
}
