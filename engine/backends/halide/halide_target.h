// Halide's target for the code this process generates, kept out of engine/core/host_facts.h so
// that only code that compiles with Halide calls into it.
#pragma once
#include <Halide.h>

namespace tilebank::engine {

// The host's target (HL_JIT_TARGET, when set, overrides the detected one) less the x86 features
// above TILEBANK_ISA's level; inside a JudgedTarget (engine/core/host_facts.h), the target of the
// judged soc_version's level on this host's architecture and OS.
Halide::Target HostHalideTarget();

}  // namespace tilebank::engine
