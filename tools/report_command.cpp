// `tilebank report`: one self-contained HTML page (report/) of tuning jobs from their result files,
// or of a bank (--bank), with its coverage of a model (--model) and a diff against another (--diff).
#include <filesystem>
#include <iostream>

#include "report/bank_report.h"
#include "report/job_report.h"
#include "tools/cli_common.h"

namespace tilebank::cli {

namespace {

struct ReportFlags {
  std::vector<std::string> results;
  std::string bank, soc, model, diff, output = "report.html";
  bool bank_given = false;
};

int RunReport(const ReportFlags& f) {
  if (f.bank_given == !f.results.empty())
    return Fail(Status::InvalidInput("give result files (aoe_result_*.json) or --bank ROOT, not both"));
  if (!f.bank_given && (!f.model.empty() || !f.diff.empty() || !f.soc.empty()))
    return Fail(Status::InvalidInput("--model, --diff and --soc are for a bank's report (--bank)"));
  Status s = f.bank_given ? report::WriteBankReport({f.bank, f.soc, f.model, f.diff}, f.output) : report::WriteJobReport(f.results, f.output);
  if (!s.ok()) return Fail(s);
  std::cout << "report: " << f.output << "\n";
  return kExitOk;
}

}  // namespace

void RegisterReportCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* report = app->add_subcommand("report", "an HTML report (inline SVG charts, nothing fetched) of tuning jobs' result files or of a bank");
  report->add_option("results", flags->results, "result files (aoe_result_*.json), or directories holding them (a batch's shards); each job's trials file beside it is read too");
  report->add_option("--bank", flags->bank, "a bank root or bank directory: its entries, provenance, --model coverage, --diff")
      ->each([flags](const std::string&) { flags->bank_given = true; });
  report->add_option("--soc", flags->soc, "with --bank: the soc_version (default: this host's)");
  report->add_option("-m,--model", flags->model, "with --bank: the model whose operators' coverage is shown");
  report->add_option("--diff", flags->diff, "with --bank: another bank (root or directory) to compare with");
  report->add_option("-o,--output", flags->output, "the HTML file")->capture_default_str();
  report->callback([flags, exit_code] { *exit_code = RunReport(*flags); });
}

}  // namespace tilebank::cli
