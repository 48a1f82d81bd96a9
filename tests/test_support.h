// Helpers shared by the test suites: temporary directories, sample entries, raw LMDB access
// (to corrupt banks on purpose) and running the tilebank binary.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "repo/bank.h"

namespace tilebank::testing {

inline constexpr const char* kTestSoc = "x86_64-test-cpu-avx2-2c";

// A fresh directory under /tmp, removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A MatMul m x k x n entry with the given tuned time (before: 2x that unless given).
Entry MatMulEntry(int m, int k, int n, double after_us, double before_us = 0, const std::string& host = "test-host");
// A subgraph and a gradient-fusion entry.
Entry GraphEntry(int width, double after_us);
Entry GradEntry(int world_size, double after_us);

std::unique_ptr<Bank> CreateBank(const std::string& dir, const std::string& soc = kTestSoc,
                                 size_t initial_map_bytes = size_t{1} << 26);
std::unique_ptr<Bank> OpenExisting(const std::string& dir, OpenMode mode = OpenMode::kReadWrite);
// How many entries of `kind` the bank in `dir` holds.
size_t EntryCount(const std::string& dir, EntryKind kind);

// Writes raw bytes into a named database, bypassing every check.
void RawPut(const std::string& dir, const std::string& db, const std::string& key, const std::string& value);
std::string RawGet(const std::string& dir, const std::string& db, const std::string& key);
std::string KeyString(Key key);  // the 8 big-endian bytes

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs `tilebank <args>` through the shell; args are used as written, `env` ("NAME=value ...")
// is set for the command.
CommandResult RunCli(const std::string& args, const std::string& env = "");
// The same, run in the working directory `dir`.
CommandResult RunCliIn(const std::string& dir, const std::string& args, const std::string& env = "");
// A refusal as the CLI must give it: exit 2 and `message` (what names the problem) in stderr.
void CheckRefused(const CommandResult& r, const std::string& message);
// Bad input as the CLI must refuse it: exit 2, `message` in stderr, and none of `paths` written.
void CheckRefusedWritingNothing(const CommandResult& r, const std::string& message, const std::vector<std::string>& paths);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);
std::string SourcePath(const std::string& relative);  // a file of the source tree

}  // namespace tilebank::testing

namespace tilebank::testing {

// Starts `tilebank <args...>` in a child process (output discarded); returns its pid.
int SpawnCli(const std::vector<std::string>& args);
// Waits for a child; returns its exit code, or 128 + signal when it was killed.
int WaitChild(int pid);
// Writes `count` MatMul entries (m = first .. first+count-1) as a JSON Lines export for `soc`;
// times are base_us + (m % 7). Entries are in export order, so the file equals an export.
void WriteEntriesFile(const std::string& path, int first, int count, double base_us, const std::string& soc = kTestSoc);

}  // namespace tilebank::testing
