// The choice at bind between one of tilebank's own kernels and oneDNN's for one instance (impl.onednn's
// algo "auto"): both run on inputs of the op's shapes and the chain's operands, alternated, and the
// verdict is remembered per instance, chain and host (engine/backends/measured_choice_cache.h), so
// that a model's next load times nothing.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/core/chain_step.h"
#include "engine/core/kernel.h"
#include "engine/core/op_spec.h"

namespace tilebank::engine {

// Whether the kernel `make_own` makes ran `op` with `post_ops` faster than the one `make_rival` makes
// (of the same op and chain), remembered under `key` and the instance: neither is made where the
// verdict is known. False where the own kernel refuses the instance (nothing remembered); true
// where the rival cannot run it. Where `runs_paying_for_making` is positive, each kernel is charged
// what making it took (its code and weights, made again at every load) spread over that many runs.
bool OwnKernelRunsFaster(const std::string& key, const OpSpec& op, const std::vector<ChainStep>& post_ops,
                         const std::function<Result<std::unique_ptr<Kernel>>()>& make_own, const std::function<std::unique_ptr<Kernel>()>& make_rival,
                         double runs_paying_for_making = 0);

}  // namespace tilebank::engine
