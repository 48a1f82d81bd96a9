// Synthetic but well-formed bank entries for benchmarks: distinct MatMul / BatchMatMul shapes
// with canonical descriptors, realistic policies and measurements.
#pragma once
#include <cstdint>
#include <vector>

#include "repo/entry.h"

namespace tilebank::bench {

// Entry i (0 <= i < 2^31) has a shape no other i has; `seed` varies times and policies.
Entry SyntheticEntry(uint64_t i, uint32_t seed);
// The descriptor of entry i, without building the entry.
std::string SyntheticDescriptor(uint64_t i);

}  // namespace tilebank::bench
