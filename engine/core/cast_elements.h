// The element conversion TypedTensor::CastTo makes, over a range, for callers that split it among
// threads or write into a buffer they keep (the Cast kernel).
#pragma once
#include <cstdint>

#include "engine/core/typed_tensor.h"

namespace tilebank::engine {

// Elements [first, first + count) of numeric `from` converted as CastTo converts them into the same
// positions of numeric `to` (of from's size, another dtype).
void CastElements(const TypedTensor& from, int64_t first, int64_t count, TypedTensor* to);

}  // namespace tilebank::engine
