#include "tools/cli_common.h"

#include "engine/jobs/progress_line.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/core/soc_version.h"
#include "repo/bank_location.h"

namespace tilebank::cli {

void AddBankFlags(CLI::App* command, BankFlags* flags, bool with_json) {
  command->add_option("--bank", flags->bank,
                      "bank root (default: TUNE_BANK_PATH, ASCEND_CACHE_PATH/aoe_data, ~/.local/share/tilebank)");
  command->add_option("--soc", flags->soc, "soc_version (default: this host's, " + HostSocVersion() + ")");
  if (with_json) command->add_flag("--json", flags->json, "print JSON instead of text");
}

std::string SocOf(const BankFlags& flags) { return flags.soc.empty() ? HostSocVersion() : flags.soc; }

std::string BankDirOf(const BankFlags& flags) { return BankDirUnder(ResolveBankRoot(flags.bank), SocOf(flags)); }

int Fail(const Status& status) {
  std::cerr << "tilebank: error: " << status.message() << "\n";
  return kExitError;
}

Result<nlohmann::json> ReadJsonArgument(const std::string& argument) {
  std::string text = argument;
  std::string name = "the inline JSON";
  size_t first = argument.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || (argument[first] != '{' && argument[first] != '[')) {
    std::ifstream in(argument);
    if (!in) return Status::NotFound("cannot read '" + argument + "': no such file (or give the description inline as JSON)");
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    name = "'" + argument + "'";
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Status::InvalidInput(name + " is not valid JSON: " + e.what());
  }
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

engine::JobListeners ProgressListeners(bool quiet) {
  engine::JobListeners listeners;
  if (auto progress = engine::ProgressListener(engine::ProgressStyleFor(quiet))) listeners.on_event.push_back(std::move(progress));
  return listeners;
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
}

std::string FormatMicros(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", us);
  return buf;
}

}  // namespace tilebank::cli
