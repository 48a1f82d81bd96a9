// tilebank: the command line. Subcommand groups live one per file in tools/.
#include <CLI/CLI.hpp>
#include <iostream>

#include "engine/target/threads.h"
#include "tools/batch_command.h"
#include "tools/cli_common.h"

int main(int argc, char** argv) {
  tilebank::engine::ShortenOpenMpSpinning(argv);
  CLI::App app{"tilebank: a tuning engine and knowledge bank of tiling policies"};
  app.set_version_flag("--version", std::string("tilebank ") + TILEBANK_VERSION);
  app.require_subcommand(1);
  int exit_code = tilebank::cli::kExitOk;

  CLI::App* bank = app.add_subcommand("bank", "manage knowledge banks: stats, query, import/export, merge, diff, validate");
  bank->require_subcommand(1);
  tilebank::cli::RegisterBankReadCommands(bank, &exit_code);
  tilebank::cli::RegisterBankWriteCommands(bank, &exit_code);
  tilebank::cli::RegisterBankCheckCommands(bank, &exit_code);

  tilebank::cli::RegisterTuneCommand(&app, &exit_code);
  tilebank::cli::RegisterRunCommand(&app, &exit_code);
  tilebank::cli::RegisterBatchCommands(&app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, version or the usage error
    return code == 0 ? tilebank::cli::kExitOk : tilebank::cli::kExitError;
  } catch (const std::exception& e) {
    // The last line of defence: every known path returns a Status, but an exception that still
    // escapes a command is bad input or a bug, never an abort (exit 134).
    std::cerr << "tilebank: error: " << e.what() << "\n";
    return tilebank::cli::kExitError;
  }
  return exit_code;
}
