// Halide's target for the code this process generates, kept out of engine/core/host_facts.h so
// that only code that compiles with Halide calls into it.
#pragma once
#include <Halide.h>

namespace tilebank::engine {

// The host's target (HL_JIT_TARGET, when set, overrides the detected one) less the x86 features
// above TILEBANK_ISA's level; inside a JudgedTarget (engine/core/host_facts.h), the target of the
// judged soc_version's level on this host's architecture and OS.
Halide::Target HostHalideTarget();

// What HostHalideTarget() is made from, without calling into Halide (which would open libHalide and
// LLVM): on x86-64 the CPU's feature words (CPUID leaves 1, 7 and 0x80000001, and the registers the
// OS saves), HL_JIT_TARGET, TILEBANK_ISA and the judged level. Equal ids give equal targets, so it
// stands for the target in the compile keys of engine/backends/halide/builder.h; elsewhere it is
// the target's own text.
std::string HostHalideTargetId();

}  // namespace tilebank::engine
