// tilebank: the command line. Subcommand groups live one per file in tools/.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

#include "engine/core/isa_level.h"
#include "engine/core/startup_environment.h"
#include "tools/batch_command.h"
#include "tools/cli_common.h"

namespace {

// --isa LEVEL (anywhere on the line) is TILEBANK_ISA=LEVEL: it must be in force before anything
// reads the host's soc_version or runs a kernel, so it is read before the line is parsed.
void IsaOptionToEnvironment(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--isa" && i + 1 < argc) setenv("TILEBANK_ISA", argv[i + 1], 1);
    else if (arg.rfind("--isa=", 0) == 0) setenv("TILEBANK_ISA", arg.c_str() + 6, 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  tilebank::engine::PrepareStartupEnvironment(argc, argv);
  IsaOptionToEnvironment(argc, argv);
  if (tilebank::Status s = tilebank::ApplyIsaRestriction(); !s.ok()) {
    std::cerr << "tilebank: error: " << s.message() << "\n";
    return tilebank::cli::kExitError;
  }
  CLI::App app{"tilebank: a tuning engine and knowledge bank of tiling policies"};
  app.set_version_flag("--version", std::string("tilebank ") + TILEBANK_VERSION);
  app.require_subcommand(1);
  std::string isa;
  app.add_option("--isa", isa,
                 "generate code for this ISA level, one the host has (" + tilebank::IsaNames() +
                     "); the soc_version names it; TILEBANK_ISA does the same")
      ->envname("TILEBANK_ISA");
  app.fallthrough();  // --isa may follow the subcommand
  int exit_code = tilebank::cli::kExitOk;

  CLI::App* bank = app.add_subcommand("bank", "manage knowledge banks: stats, query, import/export, merge, diff, validate");
  bank->require_subcommand(1);
  tilebank::cli::RegisterBankReadCommands(bank, &exit_code);
  tilebank::cli::RegisterBankWriteCommands(bank, &exit_code);
  tilebank::cli::RegisterBankCheckCommands(bank, &exit_code);

  tilebank::cli::RegisterTuneCommand(&app, &exit_code);
  tilebank::cli::RegisterRunCommand(&app, &exit_code);
  tilebank::cli::RegisterBatchCommands(&app, &exit_code);
  tilebank::cli::RegisterReportCommand(&app, &exit_code);
  tilebank::cli::RegisterQuantizeCommand(&app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, version or the usage error
    return code == 0 ? tilebank::cli::kExitOk : tilebank::cli::kExitError;
  } catch (const std::bad_alloc&) {
    // The machine, not the input's form: a model or bank larger than this machine's memory.
    std::cerr << "tilebank: error: out of memory (the model, data or bank needs more memory than this machine gives)\n";
    return tilebank::cli::kExitError;
  } catch (const std::exception& e) {
    // Every known path returns a Status: an exception that still escapes a command is a bug, told
    // apart from a refusal by its exit code (never an abort, exit 134).
    std::cerr << "tilebank: internal error: " << e.what() << " (a bug in tilebank, not a verdict on the input)\n";
    return tilebank::cli::kExitInternal;
  }
  return exit_code;
}
