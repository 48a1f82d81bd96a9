// What schedule templates need to know about the machine they compile for.
#pragma once
#include <Halide.h>

#include <string>

namespace tilebank::engine {

struct HostFacts {
  Halide::Target target;   // the JIT target (host features, less those above TILEBANK_ISA's level)
  int vector_floats = 8;   // fp32 lanes of one vector register
  int vector_registers = 16;
  int cores = 1;
  long l1_bytes = 32 << 10;
  long l2_bytes = 1 << 20;
};

// The facts templates plan with. Normally this process's code-generation target, read once:
// the host's, restricted to TILEBANK_ISA's level when it is set (engine/core/isa_level.h);
// HL_JIT_TARGET, when set, overrides the detected target. Inside a JudgedTarget on this thread:
// the vector facts of the soc_version being judged.
const HostFacts& Host();

// While it lives, Host() on this thread answers with the vector facts (and a matching Halide
// target) of `soc_version`'s ISA level, this host's caches and cores kept: a bank's policies are
// checked against the target they were tuned for, not this host's. Nothing may be compiled or run
// inside one (the target may be wider than the host). A soc_version naming no known level leaves
// Host() as it is. Scopes nest.
class JudgedTarget {
 public:
  explicit JudgedTarget(const std::string& soc_version);
  ~JudgedTarget();
  JudgedTarget(const JudgedTarget&) = delete;
  JudgedTarget& operator=(const JudgedTarget&) = delete;

 private:
  const HostFacts* previous_;
  HostFacts facts_;
};

}  // namespace tilebank::engine
