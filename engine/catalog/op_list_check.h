// The check a tuning job runs over its whole operator list before it opens a bank or writes a
// result file: every op is of a type some template implements, its shapes agree with the op's
// semantics (inner dimensions, broadcasting, channels and groups, the declared output against
// the inferred one: the templates' own checks), and the tensors a tuning run allocates fit in the
// memory this machine has available.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/op_spec.h"

namespace tilebank::engine {

// kInvalidInput for the first op that cannot be tuned: "PATH: op I (NAME, TYPE): FIELD ...".
Status CheckOpList(const std::string& path, const std::vector<OpSpec>& ops);

// Bytes a tuning run of `op` holds at once: its inputs, the kernel's output and the reference's,
// and workspaces (packed panels, im2col columns) of the same order.
uint64_t EstimatedRunBytes(const OpSpec& op);

// MemAvailable of /proc/meminfo (physical memory when it cannot be read).
uint64_t AvailableMemoryBytes();

}  // namespace tilebank::engine
