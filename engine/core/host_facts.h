// What schedule templates need to know about the machine they compile for. Nothing here calls
// Halide: a process that runs no Halide kernel never loads it (its code generator, LLVM, is most
// of a process's resident memory). Halide's own target is engine/backends/halide/halide_target.h.
#pragma once
#include <optional>
#include <string>

#include "engine/core/isa_level.h"

namespace tilebank::engine {

struct HostFacts {
  // The ISA level code is generated for: the host's widest, restricted to TILEBANK_ISA's; inside
  // a JudgedTarget, the judged soc_version's. nullopt on a host of unknown architecture.
  std::optional<IsaLevel> level;
  bool judged = false;     // inside a JudgedTarget
  int vector_floats = 8;   // fp32 lanes of one vector register
  int vector_registers = 16;
  int cores = 1;
  long l1_bytes = 32 << 10;
  long l2_bytes = 1 << 20;
};

// The facts templates plan with. Normally this process's, read once: the vector facts of the
// code-generation level (engine/core/isa_level.h: the host's, restricted to TILEBANK_ISA's when it
// is set). Inside a JudgedTarget on this thread: the vector facts of the soc_version being judged.
const HostFacts& Host();

// While it lives, Host() on this thread answers with the vector facts (and Halide, with a matching
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
