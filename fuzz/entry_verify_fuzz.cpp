// libFuzzer target: the stored-value checks (checksum, FlatBuffers Verifier, field checks).
// Inputs whose first byte is even get a correct checksum prepended, so the fuzzer reaches the
// Verifier with arbitrary FlatBuffer bytes; odd ones are taken as stored values as they are.
#include <xxhash.h>

#include <cstdint>
#include <string>

#include "repo/entry_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string stored;
  if (data[0] % 2 == 0) {
    const uint64_t checksum = XXH3_64bits(body.data(), body.size());
    for (int i = 0; i < 8; ++i) stored.push_back(static_cast<char>((checksum >> (8 * i)) & 0xff));
    stored += body;
  } else {
    stored = body;
  }
  auto entry = tilebank::DecodeEntry(stored);
  if (entry.ok()) {
    // Whatever passes the checks must survive a re-encode.
    auto again = tilebank::DecodeEntry(tilebank::EncodeEntry(*entry));
    if (!again.ok() || again->descriptor != entry->descriptor || again->policy != entry->policy) __builtin_trap();
  }
  return 0;
}
