#include "engine/backends/broadcast_binary_rows.h"

namespace tilebank::engine {
namespace {

// y[i] = a[i] op b[i * b_step] for i < n, b_step 0 or 1: loops the compiler vectorizes.
template <class F>
void Row(const float* a, const float* b, float* y, int64_t n, int64_t b_step, F f) {
  if (b_step == 0) {
    const float s = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], s);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  }
}

}  // namespace

BroadcastBinaryRows::BroadcastBinaryRows(const std::string& op_type, std::vector<int64_t> dims, const std::vector<int64_t>& b_dims)
    : op_(op_type == "Add" ? '+' : op_type == "Sub" ? '-' : op_type == "Mul" ? '*' : '/'), dims_(std::move(dims)) {
  if (dims_.empty()) dims_ = {1};
  const size_t rank = dims_.size();
  b_strides_.assign(rank, 0);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    const int64_t extent = d + b_dims.size() >= rank ? b_dims[d + b_dims.size() - rank] : 1;
    b_strides_[d] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  len_ = dims_.back();
  rows_ = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows_ *= dims_[d];
}

void BroadcastBinaryRows::Run(const float* a, const float* b, float* y) const {
  const int64_t b_step = b_strides_.back();
  for (int64_t r = 0; r < rows_; ++r) {
    int64_t at = 0;  // b's offset of row r
    for (int64_t d = static_cast<int64_t>(dims_.size()) - 2, rest = r; d >= 0 && rest; --d) {
      at += (rest % dims_[d]) * b_strides_[d];
      rest /= dims_[d];
    }
    const float* x = a + r * len_;
    float* out = y + r * len_;
    switch (op_) {
      case '+': Row(x, b + at, out, len_, b_step, [](float p, float q) { return p + q; }); break;
      case '-': Row(x, b + at, out, len_, b_step, [](float p, float q) { return p - q; }); break;
      case '*': Row(x, b + at, out, len_, b_step, [](float p, float q) { return p * q; }); break;
      default: Row(x, b + at, out, len_, b_step, [](float p, float q) { return p / q; }); break;
    }
  }
}

}  // namespace tilebank::engine
