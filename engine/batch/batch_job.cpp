#include "engine/batch/batch_job.h"

namespace tilebank::engine {

const BatchJob& OpatBatchJob();   // opat_batch_job.cpp
const BatchJob& SgatBatchJob();   // sgat_batch_job.cpp
const BatchJob& GdatBatchJob();   // gdat_batch_job.cpp

nlohmann::json BatchJob::ShardInput(const BatchPlan& plan, size_t shard) const {
  nlohmann::json list = nlohmann::json::array();
  for (size_t t : plan.TasksOf(shard)) list.push_back(plan.tasks[t].payload);
  return list;
}

const BatchJob& BatchJobOf(int job_type) {
  switch (JobTypeOf(job_type).id) {  // the one place a job-type number picks a batch job
    case 1: return SgatBatchJob();
    case 4: return GdatBatchJob();
    default: return OpatBatchJob();
  }
}

}  // namespace tilebank::engine
