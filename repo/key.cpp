#include "repo/key.h"

#include <xxhash.h>

#include <charconv>
#include <cstdio>

namespace tilebank {

const char* KindName(EntryKind kind) {
  switch (kind) {
    case EntryKind::kOp: return "op";
    case EntryKind::kGraph: return "graph";
    case EntryKind::kGrad: return "grad";
  }
  return "?";
}

Result<EntryKind> ParseKind(std::string_view name) {
  for (EntryKind kind : kAllKinds)
    if (name == KindName(kind)) return kind;
  return Status::InvalidInput("unknown entry kind '" + std::string(name) + "' (expected op, graph or grad)");
}

Key KeyOfDescriptor(std::string_view canonical_descriptor) {
  return XXH3_64bits(canonical_descriptor.data(), canonical_descriptor.size());
}

KeyBytes EncodeKey(Key key) {
  KeyBytes bytes;
  for (int i = 7; i >= 0; --i, key >>= 8) bytes[i] = static_cast<unsigned char>(key & 0xff);
  return bytes;
}

Key DecodeKey(const void* eight_bytes) {
  const auto* p = static_cast<const unsigned char*>(eight_bytes);
  Key key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | p[i];
  return key;
}

std::string FormatKey(EntryKind kind, Key key) {
  char buf[32];
  if (kind == EntryKind::kGraph)
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(key));
  else
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(key));
  return buf;
}

std::string EntryName(EntryKind kind, Key key) { return std::string(KindName(kind)) + " entry " + FormatKey(kind, key); }

Result<Key> ParseKey(std::string_view text) {
  int base = 10;
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    base = 16;
    digits.remove_prefix(2);
  }
  Key key = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), key, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return Status::InvalidInput("bad key '" + std::string(text) +
                                "': expected 0x followed by hex digits, or an unsigned decimal repo_key");
  return key;
}

}  // namespace tilebank
