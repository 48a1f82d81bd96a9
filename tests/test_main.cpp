#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "engine/core/isa_level.h"

namespace {

// How many test cases the run's filters let through (-1 until a run ends: a listing never does).
int cases_run = -1;

// A listener that keeps the run's count: a run that executes no test case fails (see main).
struct CaseCounter : doctest::IReporter {
  explicit CaseCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { cases_run = static_cast<int>(stats.numTestCasesPassingFilters); }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("case_counter", 1, CaseCounter);

}  // namespace

// TILEBANK_ISA restricts the kernels these tests run as it does the CLI's (.ci/run runs them so).
// Exit status: doctest's, except that a run whose filters select no test case fails (3): CTest runs
// each case by name (tests/doctest_tests.cmake), and a name the filter cannot match must not pass.
int main(int argc, char** argv) {
  if (tilebank::Status s = tilebank::ApplyIsaRestriction(); !s.ok()) {
    std::fprintf(stderr, "tilebank_tests: %s\n", s.message().c_str());
    return 2;
  }
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --help, --version, --list-*: no run
  if (cases_run == 0) {
    std::fprintf(stderr, "tilebank_tests: no test case matched the filters: nothing was tested\n");
    return 3;
  }
  return rc;
}
