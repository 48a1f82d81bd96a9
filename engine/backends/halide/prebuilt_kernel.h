// A Halide kernel run from the kernel disk cache without Halide: its entry point (KernelDiskCache::
// LoadPrebuilt) and a run description, written when the kernel was compiled, of the arguments it
// takes. Only programs whose arguments need nothing of Halide's to be made have one: every input
// read in place from its row-major memory (HalideProgram::view_extents), the output written in
// place (no fetch). Their buffers are Halide::Runtime::Buffer views, header-only code.
#pragma once
#include <memory>
#include <string>

#include "engine/backends/halide/halide_program.h"
#include "engine/core/kernel.h"

namespace tilebank::engine {

// The run description of `program`; "" when it has none (a conversion or a fetch).
std::string RunDescriptionOf(const HalideProgram& program);

// The kernel that calls `entry` as `description` says; kInvalidInput for a malformed description.
Result<std::unique_ptr<Kernel>> PrebuiltHalideKernel(ArgvEntry entry, const std::string& description);

}  // namespace tilebank::engine
