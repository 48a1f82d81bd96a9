// Bank keys: xxh3-64 of a canonical descriptor, stored as 8 bytes big-endian so that LMDB's
// byte order is numeric order. Operator and gradient keys print as 0x + 16 hex digits; subgraph
// keys print as an unsigned decimal repo_key, as in AOE's result files.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tilebank {

enum class EntryKind : uint8_t { kOp = 0, kGraph = 1, kGrad = 2 };
inline constexpr EntryKind kAllKinds[] = {EntryKind::kOp, EntryKind::kGraph, EntryKind::kGrad};

// "op", "graph", "grad": also the names of the LMDB databases that hold each kind.
const char* KindName(EntryKind kind);
Result<EntryKind> ParseKind(std::string_view name);

using Key = uint64_t;
using KeyBytes = std::array<unsigned char, 8>;

Key KeyOfDescriptor(std::string_view canonical_descriptor);
KeyBytes EncodeKey(Key key);
Key DecodeKey(const void* eight_bytes);

// Prints as the kind's convention (see above).
std::string FormatKey(EntryKind kind, Key key);
// "op entry 0x...": how messages name an entry.
std::string EntryName(EntryKind kind, Key key);
// Accepts "0x" + hex digits, or an unsigned decimal.
Result<Key> ParseKey(std::string_view text);

}  // namespace tilebank
