// The hook a tuning job calls after each task's checkpoint commits (a batch worker's progress and
// publishing, engine/batch/shard_worker.cpp): the job's bank, between transactions, and the tasks
// done and failed so far over every run of the job.
#pragma once
#include <cstddef>
#include <functional>

namespace tilebank {
class Bank;
}

namespace tilebank::engine {

using TaskDoneHook = std::function<void(const Bank& bank, size_t done, size_t failed)>;

}  // namespace tilebank::engine
