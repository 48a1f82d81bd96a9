// Add, Sub, Mul or Div of a full operand and one broadcast into it, by rows on the calling thread:
// for the small outputs (a few thousand values) where starting a library primitive, or waking
// threads, costs more than the arithmetic (an RNN unrolled into ops on vectors of a few hundred).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tilebank::engine {

class BroadcastBinaryRows {
 public:
  // `dims`: the output's (and `a`'s) dims; `b_dims`: b's, of the same rank, each dims[i] or 1.
  // op_type is Add, Sub, Mul or Div (y = a op b).
  BroadcastBinaryRows(const std::string& op_type, std::vector<int64_t> dims, const std::vector<int64_t>& b_dims);
  // y may be a (in place); not b unless b is full.
  void Run(const float* a, const float* b, float* y) const;

 private:
  char op_;
  std::vector<int64_t> dims_, b_strides_;  // b's stride along each output dim, 0 where it broadcasts
  int64_t rows_ = 0, len_ = 0;             // the output as rows of its last dim
};

}  // namespace tilebank::engine
