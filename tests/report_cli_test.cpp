// `tilebank report` and the progress of `tune` from the command line: a job's report and a bank's
// report written as one HTML file with inline SVG, bad input refused with exit 2 writing nothing,
// plain progress lines when stderr is not a terminal and none with --quiet.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

const char* kReportOps = R"([
 {"op":"Relu","name":"relu","input_desc":[{"shape":[64,256],"type":"float32"}],"output_desc":[{"shape":[64,256],"type":"float32"}]},
 {"op":"Softmax","name":"sm","input_desc":[{"shape":[16,128],"type":"float32"}],"output_desc":[{"shape":[16,128],"type":"float32"}]}
])";

std::string OnlyFile(const std::string& dir, const std::string& prefix) {
  std::string found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) {
      CHECK_MESSAGE(found.empty(), (std::string("two files start with ") + prefix).c_str());
      found = e.path().string();
    }
  return found;
}

TEST_CASE("tune prints a line per task when stderr is no terminal, nothing with --quiet, report draws the job and the bank") {
  TempDir dir;
  WriteFile(dir / "ops.json", kReportOps);
  const std::string common = " --singleop " + (dir / "ops.json") + " --trials 3 --bank " + (dir / "bank");
  auto loud = RunCli("tune -j 2" + common + " --output " + (dir / "loud"));
  REQUIRE_MESSAGE(loud.exit_code == 0, loud.err);
  CHECK(loud.err.find("[OPAT ops] 1/2 relu (Relu): ") != std::string::npos);
  CHECK(loud.err.find("[OPAT ops] 2/2 tasks in") != std::string::npos);
  auto quiet = RunCli("tune -j 2 -q --repeat-tune" + common + " --output " + (dir / "quiet"));
  REQUIRE_MESSAGE(quiet.exit_code == 0, quiet.err);
  CHECK(quiet.err.empty());

  // The trials file beside the result file holds every trial and each task's outcome.
  const std::string result = OnlyFile(dir / "quiet", "aoe_result_opat_"), trials = OnlyFile(dir / "quiet", "aoe_trials_opat_");
  REQUIRE(!trials.empty());
  const std::string lines = ReadFile(trials);
  CHECK(lines.find("\"event\":\"trial\"") != std::string::npos);
  CHECK(lines.find("\"event\":\"task_done\"") != std::string::npos);

  auto report = RunCli("report " + result + " -o " + (dir / "job.html"));
  REQUIRE_MESSAGE(report.exit_code == 0, report.err);
  const std::string html = ReadFile(dir / "job.html");
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("OPAT job ops") != std::string::npos);
  CHECK(html.find("Every trial against each knob") != std::string::npos);
  CHECK(html.find("src=") == std::string::npos);  // nothing fetched: no external script, image or style
  CHECK(html.find("<link") == std::string::npos);

  // Directories stand for the result files under them (a batch's shards): the jobs over time.
  auto both = RunCli("report " + (dir / "loud") + " " + (dir / "quiet") + " -o " + (dir / "both.html"));
  REQUIRE_MESSAGE(both.exit_code == 0, both.err);
  CHECK(ReadFile(dir / "both.html").find("s since the first job started") != std::string::npos);

  auto bank = RunCli("report --bank " + (dir / "bank") + " --diff " + (dir / "bank") + " -o " + (dir / "bank.html"));
  REQUIRE_MESSAGE(bank.exit_code == 0, bank.err);
  CHECK(ReadFile(dir / "bank.html").find("Entries per op type and template") != std::string::npos);
}

TEST_CASE("report refuses bad input with exit 2 and writes nothing") {
  TempDir dir;
  const std::string out = dir / "r.html";
  CheckRefusedWritingNothing(RunCli("report " + (dir / "missing.json") + " -o " + out), "cannot read the result file", {out});
  WriteFile(dir / "other.json", "{\"not\": \"a result\"}");
  CheckRefusedWritingNothing(RunCli("report " + (dir / "other.json") + " -o " + out), "is not a tuning job's result file", {out});
  CheckRefusedWritingNothing(RunCli("report -o " + out), "give result files", {out});
  CheckRefusedWritingNothing(RunCli("report " + dir.path() + " -o " + out), "no result file (aoe_result_*.json) under", {out});
  CheckRefusedWritingNothing(RunCli("report " + (dir / "other.json") + " --bank " + dir.path() + " -o " + out), "not both", {out});
  CheckRefusedWritingNothing(RunCli("report --bank " + (dir / "nobank") + " -o " + out), "no bank at", {out});
  CheckRefusedWritingNothing(RunCli("report " + (dir / "other.json") + " --model m.onnx -o " + out), "are for a bank's report", {out});
}

}  // namespace
}  // namespace tilebank::testing
