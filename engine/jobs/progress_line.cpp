#include "engine/jobs/progress_line.h"

#include <unistd.h>

#include <cmath>
#include <memory>
#include <string>

#include "engine/jobs/job_types.h"

namespace tilebank::engine {

ProgressStyle ProgressStyleFor(bool quiet) {
  if (quiet) return ProgressStyle::kQuiet;
  return isatty(STDERR_FILENO) ? ProgressStyle::kLive : ProgressStyle::kPlain;
}

std::string ClockText(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

namespace {

struct ProgressState {
  ProgressStyle style;
  std::FILE* out;
  size_t done_at_start = 0;  // tasks done in earlier runs: the estimate counts this run's pace only
  double elapsed_at_start = 0;
  bool line_open = false;    // kLive: a line is on screen without its newline
};

std::string Head(const JobEvent& e) {
  const JobType* t = FindJobType(e.job_type);
  return "[" + std::string(t ? t->name : "job") + " " + e.tuning_name + "] " + std::to_string(e.done) + "/" + std::to_string(e.tasks);
}

// "0:42 elapsed, ~3:10 left" (no estimate before this run finished a task).
std::string Times(const ProgressState& s, const JobEvent& e) {
  std::string text = ClockText(e.elapsed_s) + " elapsed";
  const size_t done_now = e.done - s.done_at_start;
  if (done_now > 0 && e.tasks > e.done) {
    const double per_task = (e.elapsed_s - s.elapsed_at_start) / static_cast<double>(done_now);
    text += ", ~" + ClockText(per_task * static_cast<double>(e.tasks - e.done)) + " left";
  }
  return text;
}

std::string Best(const JobEvent& e) {
  if (e.best_gain_percent <= 0) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " | best +%.1f%%", e.best_gain_percent);
  return buf;
}

void Live(ProgressState& s, const std::string& text) {
  std::fprintf(s.out, "\r\033[K%s", text.c_str());
  std::fflush(s.out);
  s.line_open = true;
}

void OnEvent(ProgressState& s, const JobEvent& e) {
  using Kind = JobEvent::Kind;
  if (e.kind == Kind::kJobStarted) {
    s.done_at_start = e.done;
    s.elapsed_at_start = e.elapsed_s;
    if (s.style == ProgressStyle::kPlain && e.done > 0)
      std::fprintf(s.out, "%s: going on after %zu task(s) done in earlier runs\n", Head(e).c_str(), e.done);
    return;
  }
  const std::string task = e.task_name + " (" + e.task_op + ")";
  if (s.style == ProgressStyle::kLive) {
    if (e.kind == Kind::kJobDone) {
      Live(s, Head(e) + " tasks" + (e.failed ? ", " + std::to_string(e.failed) + " failed" : "") + Best(e) + " | " + ClockText(e.elapsed_s) +
                  (e.stopped ? " | stopped: --reload goes on" : " | done"));
      std::fprintf(s.out, "\n");
      s.line_open = false;
      return;
    }
    std::string trial;
    if (e.kind == Kind::kTrial) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " trial %d/%d", e.trial.trial, e.trial.budget);
      trial = buf;
    }
    Live(s, Head(e) + " | " + task + trial + Best(e) + " | " + Times(s, e));
    return;
  }
  // Plain: a line per task done and one at the end.
  if (e.kind == Kind::kTaskDone) {
    char times[96] = "";
    if (e.status != "failed" && e.status != "skipped" && e.before_us > 0)
      std::snprintf(times, sizeof times, "  %.2f us -> %.2f us", e.before_us, e.after_us > 0 ? e.after_us : e.before_us);
    std::fprintf(s.out, "%s %s: %s%s%s  (%s)\n", Head(e).c_str(), task.c_str(), e.status.c_str(), times,
                 e.failure.empty() ? "" : ("  (" + e.failure + ")").c_str(), Times(s, e).c_str());
  } else if (e.kind == Kind::kJobDone) {
    std::fprintf(s.out, "%s tasks%s in %s%s\n", Head(e).c_str(), e.failed ? (", " + std::to_string(e.failed) + " failed").c_str() : "",
                 ClockText(e.elapsed_s).c_str(), e.stopped ? "; stopped: --reload goes on" : "");
  }
}

}  // namespace

std::function<void(const JobEvent&)> ProgressListener(ProgressStyle style, std::FILE* out) {
  if (style == ProgressStyle::kQuiet) return nullptr;
  auto state = std::make_shared<ProgressState>();
  state->style = style;
  state->out = out;
  return [state](const JobEvent& e) { OnEvent(*state, e); };
}

}  // namespace tilebank::engine
