// The HTML report of tuning jobs (`tilebank report RESULT.json...`, TuneResult.report): one
// self-contained page (inline SVG charts drawn here, a few lines of inline script to sort tables,
// nothing fetched) from each job's result file and the trials file beside it (engine/jobs/task_loop.h):
// the header, the model before and after, the per-task table, best-so-far against trials and time,
// every trial against each knob with failures marked and the measurement spread, GDAT's segments
// against the backward timeline, and several jobs (a batch's shards) over time.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"

namespace tilebank::report {

// A directory given stands for every job result file under it (a batch's shards; not the batch's
// merged file, which has no trials). kNotFound / kInvalidInput naming a result file that is missing
// or not one of tilebank's; the page is written atomically.
Status WriteJobReport(const std::vector<std::string>& result_paths, const std::string& output);

}  // namespace tilebank::report
