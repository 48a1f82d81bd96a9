// Progress of a tuning job, read from its events (engine/jobs/job_events.h): on a terminal one live
// line per job (tasks done of total, the current task, its trials, the best improvement so far,
// elapsed and estimated time left), rewritten in place; elsewhere a plain line per task done; none
// with --quiet.
#pragma once
#include <cstdio>
#include <functional>

#include "engine/jobs/job_events.h"

namespace tilebank::engine {

enum class ProgressStyle { kQuiet, kPlain, kLive };

// kQuiet when `quiet`, else kLive when stderr is a terminal, else kPlain.
ProgressStyle ProgressStyleFor(bool quiet);

// A listener writing `style`'s progress to `out` (nullptr for kQuiet).
std::function<void(const JobEvent&)> ProgressListener(ProgressStyle style, std::FILE* out = stderr);

// "1:05", "12:00:03": seconds as a clock reads them.
std::string ClockText(double seconds);

}  // namespace tilebank::engine
