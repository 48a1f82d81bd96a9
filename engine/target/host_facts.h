// What schedule templates need to know about the machine they compile for.
#pragma once
#include <Halide.h>

namespace tilebank::engine {

struct HostFacts {
  Halide::Target target;   // the JIT target (host features)
  int vector_floats = 8;   // fp32 lanes of one vector register
  int vector_registers = 16;
  int cores = 1;
  long l1_bytes = 32 << 10;
  long l2_bytes = 1 << 20;
};

// Read once per process. HL_JIT_TARGET, when set, overrides the detected target.
const HostFacts& Host();

}  // namespace tilebank::engine
