// What every `tilebank bank` command shares: the --bank/--soc/--json flags, opening a bank
// (engine/core/host_bank.h), reading a JSON argument, and turning a Status into a message and an
// exit code.
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/jobs/job_events.h"
#include "engine/core/host_bank.h"
#include "repo/bank.h"

namespace tilebank::cli {

// Exit codes: 0 ok; 1 differences or problems found (diff, validate, run --data) or no policy
// (query); 2 usage error, bad input or refused operation, with a message naming the problem;
// 3 an internal error: a bug in tilebank (an exception no command turned into a Status), never a
// verdict on the input. Tests count 3 as a failure wherever they accept a refusal.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFound = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitInternal = 3;

struct BankFlags {
  std::string bank;  // root; empty: the environment chain
  std::string soc;   // empty: the host's soc_version
  bool json = false;
};

void AddBankFlags(CLI::App* command, BankFlags* flags, bool with_json);
std::string SocOf(const BankFlags& flags);
std::string BankDirOf(const BankFlags& flags);


// Prints "tilebank: error: <message>" to stderr and returns kExitError.
int Fail(const Status& status);

// An argument that is inline JSON (starts with '{' or '[') or the path of a JSON file.
Result<nlohmann::json> ReadJsonArgument(const std::string& argument);

bool StderrIsTerminal();
// The progress listener a job run from the CLI gets (engine/jobs/progress_line.h): a live line on a
// terminal, a plain line per task elsewhere, none when `quiet`.
engine::JobListeners ProgressListeners(bool quiet);
std::string HumanBytes(uint64_t bytes);
std::string FormatMicros(double us);

// Registers the subcommands of `tilebank bank`; each sets *exit_code when it runs.
void RegisterBankReadCommands(CLI::App* bank, int* exit_code);
void RegisterBankWriteCommands(CLI::App* bank, int* exit_code);
void RegisterBankCheckCommands(CLI::App* bank, int* exit_code);
// Registers `tilebank quantize` (tools/quantize_command.cpp).
void RegisterQuantizeCommand(CLI::App* app, int* exit_code);
// Registers `tilebank report` (tools/report_command.cpp).
void RegisterReportCommand(CLI::App* app, int* exit_code);
// Registers `tilebank tune` and `tilebank run`.
void RegisterTuneCommand(CLI::App* app, int* exit_code);
void RegisterRunCommand(CLI::App* app, int* exit_code);

}  // namespace tilebank::cli
