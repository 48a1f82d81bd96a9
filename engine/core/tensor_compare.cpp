#include "engine/core/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>


namespace tilebank::engine {
namespace {

std::string Element(int64_t i, const std::string& got, const std::string& want) {
  return "element " + std::to_string(i) + ": " + got + " vs " + want;
}

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

TensorMatch MatchTensor(const TypedTensor& got, const TypedTensor& want, double rtol, double atol, double allowance) {
  TensorMatch m;
  if (got.kind != want.kind) {
    m.ok = false;
    m.worst = std::string("a ") + ValueKindName(got.kind) + " where a " + ValueKindName(want.kind) + " was expected";
    return m;
  }
  if (!want.IsTensor()) {  // a sequence or optional: the same number of elements, each matching
    if (got.elements.size() != want.elements.size()) {
      m.ok = false;
      m.worst = std::string(want.kind == ValueKind::kOptional ? (want.elements.empty() ? "a value where none" : "none where a value")
                                                              : (std::to_string(got.elements.size()) + " elements where " +
                                                                 std::to_string(want.elements.size()))) +
                " was expected";
      return m;
    }
    if (want.elements.empty() && got.dtype != want.dtype && got.dtype != DType::kUndefined && want.dtype != DType::kUndefined) {
      m.ok = false;
      m.worst = "an empty " + std::string(ValueKindName(want.kind)) + " of " + DTypeName(got.dtype) + " where one of " + DTypeName(want.dtype) + " was expected";
      return m;
    }
    for (size_t i = 0; i < want.elements.size(); ++i) {
      const TensorMatch e = MatchTensor(got.elements[i], want.elements[i], rtol, atol, allowance);
      m.mismatched += e.mismatched;
      m.compared += e.compared;
      m.max_abs_error = std::max(m.max_abs_error, e.max_abs_error);
      m.max_rel_error = std::max(m.max_rel_error, e.max_rel_error);
      if (!e.ok && m.ok) m.worst = (want.kind == ValueKind::kSequence ? "sequence element " + std::to_string(i) + ": " : "") + e.worst;
      m.ok = m.ok && e.ok;
    }
    return m;
  }
  if (got.dtype != want.dtype) {
    m.ok = false;
    m.worst = "dtype " + DTypeName(got.dtype) + " where " + DTypeName(want.dtype) + " was expected";
    return m;
  }
  if (got.shape != want.shape) {
    m.ok = false;
    m.worst = "shape " + ShapeText(got.shape) + " where " + ShapeText(want.shape) + " was expected";
    return m;
  }
  const int64_t n = want.size();
  m.compared = n;
  if (want.dtype == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (got.strings[i] != want.strings[i]) {
        if (m.ok) m.worst = Element(i, "'" + got.strings[i] + "'", "'" + want.strings[i] + "'");
        m.ok = false, ++m.mismatched;
      }
    return m;
  }
  if (!IsFloating(want.dtype)) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t g = got.IntAt(i), w = want.IntAt(i);
      const double abs = std::abs(static_cast<double>(g) - static_cast<double>(w));
      m.max_abs_error = std::max(m.max_abs_error, abs);
      if (g != w && !(abs <= allowance)) {
        if (m.ok) m.worst = Element(i, std::to_string(g), std::to_string(w));
        m.ok = false, ++m.mismatched;
      }
    }
    return m;
  }
  // bfloat16 keeps 8 significant bits: values one unit in the last place apart (rounded, or
  // truncated as ONNX 1.12's reference casts) match.
  if (want.dtype == DType::kBFloat16) rtol = std::max(rtol, 1.0 / 128);
  double worst_excess = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double g = got.At(i), w = want.At(i);
    if (std::isnan(g) && std::isnan(w)) continue;
    const double abs = std::abs(g - w), rel = w != 0 ? abs / std::abs(w) : (abs > 0 ? INFINITY : 0.0);
    // An infinity where another value (or the other infinity) is expected, or a NaN on one side only:
    // outside any tolerance.
    const bool unbounded = ((std::isinf(w) || std::isinf(g)) && g != w) || (std::isnan(abs) && !std::isinf(w));
    if (unbounded) {
      if (worst_excess < INFINITY) worst_excess = INFINITY, m.worst = Element(i, Number(g), Number(w));
      m.ok = false, ++m.mismatched;
      continue;
    }
    if (std::isinf(w)) continue;  // equal infinities
    m.max_abs_error = std::max(m.max_abs_error, abs);
    if (w != 0) m.max_rel_error = std::max(m.max_rel_error, rel);
    const double excess = abs - (atol + rtol * std::abs(w) + allowance);
    if (excess > 0) m.ok = false, ++m.mismatched;
    if (excess > worst_excess) worst_excess = excess, m.worst = Element(i, Number(g), Number(w));
  }
  return m;
}

}  // namespace tilebank::engine
