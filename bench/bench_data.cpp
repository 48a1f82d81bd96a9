#include "bench/bench_data.h"

#include <cstdio>

namespace tilebank::bench {

std::string SyntheticDescriptor(uint64_t i) {
  // (m, k, n) from the digits of i in base 128: distinct for distinct i.
  const uint64_t m = 1 + i % 128, k = 16 * (1 + (i / 128) % 128), n = 8 * (1 + i / 16384);
  const bool batched = (i % 3) == 0;
  char buf[400];
  if (batched)
    std::snprintf(buf, sizeof buf,
                  R"({"attr":{},"in":[{"dtype":"float32","format":"ND","shape":[12,%llu,%llu]},{"dtype":"float32","format":"ND","shape":[12,%llu,%llu]}],"op":"BatchMatMul","out":[{"dtype":"float32","format":"ND","shape":[12,%llu,%llu]}]})",
                  (unsigned long long)m, (unsigned long long)k, (unsigned long long)k, (unsigned long long)n,
                  (unsigned long long)m, (unsigned long long)n);
  else
    std::snprintf(buf, sizeof buf,
                  R"({"attr":{},"in":[{"dtype":"float32","format":"ND","shape":[%llu,%llu]},{"dtype":"float32","format":"ND","shape":[%llu,%llu]}],"op":"MatMul","out":[{"dtype":"float32","format":"ND","shape":[%llu,%llu]}]})",
                  (unsigned long long)m, (unsigned long long)k, (unsigned long long)k, (unsigned long long)n,
                  (unsigned long long)m, (unsigned long long)n);
  return buf;
}

Entry SyntheticEntry(uint64_t i, uint32_t seed) {
  const uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t(seed) << 32);
  Entry e;
  e.kind = EntryKind::kOp;
  e.descriptor = SyntheticDescriptor(i);
  e.op_type = i % 3 == 0 ? "BatchMatMul" : "MatMul";
  e.template_id = i % 3 == 0 ? "batch_matmul.tiled" : "matmul.tiled";
  e.template_version = 1;
  e.tune_mode = TuneMode::kSchedule;
  e.policy = {{"order", std::string((h >> 7) % 2 ? "mnk" : "nmk")},
              {"parallel", std::string("outer")},
              {"tile_k", int64_t{32} << ((h >> 9) % 4)},
              {"tile_m", int64_t{8} << ((h >> 3) % 5)},
              {"tile_n", int64_t{16} << ((h >> 5) % 5)},
              {"unroll", int64_t{1} << ((h >> 11) % 4)},
              {"vector_width", int64_t{16}}};
  const double before = 10.0 + double(h % 100000) / 100.0;
  e.before = {before, before * 0.02, 50};
  e.after = {before * (0.5 + double((h >> 20) % 500) / 1000.0), before * 0.01, 50};
  e.trials = 64;
  e.strategy = "GA";
  e.created_unix_ms = 1795000000000 + int64_t(i);
  e.tool_version = "0.1.0";
  e.revision = 1;
  e.origin_host = seed % 2 ? "lab2" : "lab1";
  e.origin_bank = "bench";
  return e;
}

}  // namespace tilebank::bench
