// The constants of exp(x) for x <= 0 (Softmax's exp(x - max), Sigmoid's exp(-|x|)) in fewer vector
// operations than a general exp: no overflow handling, a degree-6 polynomial on [-ln2/2, ln2/2].
// Contract: for -87.3 <= x <= 0 the relative error is below 1e-6; below -87.3 (and for -inf) the
// result is 0; a NaN gives NaN (so Softmax's row with a NaN, a +inf or only -infs is NaN throughout,
// as ONNX's reference and ONNX Runtime compute it). The Halide expression (engine/backends/halide/exp_non_positive.h) and the Highway one
// (vector_math-inl.h) use these.
#pragma once

namespace tilebank::engine::exp_non_positive {

constexpr float kLowest = -87.3f;  // e^-87.3 is about the smallest normal float
constexpr float kLog2e = 1.44269504f;
// x = k ln2 + r with |r| <= ln2/2; ln2 in two parts so that k ln2 is exact for |k| <= 126.
constexpr float kLn2High = 0.693145751953125f;
constexpr float kLn2Low = 1.428606765330187e-06f;
// Taylor series of e^r to r^6 (the next term is below 1.3e-7 of the result), lowest power first.
constexpr float kTaylor[7] = {1.f, 1.f, 1.f / 2, 1.f / 6, 1.f / 24, 1.f / 120, 1.f / 720};

}  // namespace tilebank::engine::exp_non_positive
