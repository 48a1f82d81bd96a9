#include "tests/test_support.h"

#include <doctest/doctest.h>

#include <lmdb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "repo/canonical.h"

namespace tilebank::testing {

namespace fs = std::filesystem;
using json = nlohmann::json;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "tilebank-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Restore permissions a test may have removed, then delete.
  for (auto& item : fs::recursive_directory_iterator(path_, ec))
    fs::permissions(item.path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

namespace {

json Tensor(std::vector<int> shape) { return {{"format", "ND"}, {"shape", shape}, {"type", "float32"}}; }

Entry Finish(const CanonicalDescriptor& d, const std::string& template_id, double after_us, double before_us,
             const std::string& host) {
  Entry e;
  e.kind = d.kind;
  e.op_type = d.op_type;
  e.descriptor = d.text;
  e.template_id = template_id;
  e.template_version = 1;
  e.tune_mode = TuneMode::kImpl;
  e.policy = {{"library", std::string("openblas")}};  // impl.openblas's only policy: valid for every MatMul shape
  e.before = {before_us > 0 ? before_us : 2 * after_us, 1.5, 20};
  e.after = {after_us, 0.5, 20};
  e.trials = 32;
  e.strategy = "GA";
  e.created_unix_ms = 1795000000000;
  e.tool_version = "test";
  e.revision = 1;
  e.origin_host = host;
  e.origin_bank = "test-bank";
  return e;
}

}  // namespace

Entry MatMulEntry(int m, int k, int n, double after_us, double before_us, const std::string& host) {
  json op = {{"op", "MatMul"}, {"input_desc", {Tensor({m, k}), Tensor({k, n})}}, {"output_desc", {Tensor({m, n})}}};
  return Finish(*CanonicalizeOp(op), "impl.openblas", after_us, before_us, host);
}

Entry GraphEntry(int width, double after_us) {
  json graph = {{"nodes",
                 {{{"name", "mm"}, {"op", "MatMul"}, {"inputs", {"x", "w"}},
                   {"input_desc", {Tensor({16, width}), Tensor({width, width})}}, {"output_desc", {Tensor({16, width})}}},
                  {{"name", "act"}, {"op", "Relu"}, {"inputs", {"mm"}}, {"input_desc", {Tensor({16, width})}},
                   {"output_desc", {Tensor({16, width})}}}}}};
  return Finish(*CanonicalizeGraph(graph), "sgat.fusion", after_us, 0, "test-host");
}

Entry GradEntry(int world_size, double after_us) {
  json problem = {{"gradients", {{{"numel", 1000}, {"type", "float32"}}, {{"numel", 5000}, {"type", "float32"}}}},
                  {"world_size", world_size}};
  return Finish(*CanonicalizeGrad(problem), "gdat.buckets", after_us, 0, "test-host");
}

std::unique_ptr<Bank> CreateBank(const std::string& dir, const std::string& soc, size_t initial_map_bytes) {
  OpenOptions options;
  options.mode = OpenMode::kCreateIfMissing;
  options.soc_version = soc;
  options.initial_map_bytes = initial_map_bytes;
  auto bank = Bank::Open(dir, options);
  if (!bank.ok()) throw std::runtime_error(bank.status().message());
  return std::move(*bank);
}

size_t EntryCount(const std::string& dir, EntryKind kind) {
  const auto bank = OpenExisting(dir, OpenMode::kReadOnly);  // outlives its snapshot
  auto snapshot = bank->Read();
  if (!snapshot.ok()) throw std::runtime_error(snapshot.status().message());
  size_t n = 0;
  Status s = snapshot->ForEach(kind, [&](Key, std::string_view) { ++n; return Status::Ok(); });
  if (!s.ok()) throw std::runtime_error(s.message());
  return n;
}

std::unique_ptr<Bank> OpenExisting(const std::string& dir, OpenMode mode) {
  OpenOptions options;
  options.mode = mode;
  auto bank = Bank::Open(dir, options);
  if (!bank.ok()) throw std::runtime_error(bank.status().message());
  return std::move(*bank);
}

namespace {

template <typename Body>
void WithRawTxn(const std::string& dir, const std::string& db, unsigned txn_flags, Body body) {
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_maxdbs(env, 8);
  if (mdb_env_open(env, dir.c_str(), 0, 0664) != 0) throw std::runtime_error("raw open failed: " + dir);
  MDB_txn* txn = nullptr;
  mdb_txn_begin(env, nullptr, txn_flags, &txn);
  MDB_dbi dbi;
  if (mdb_dbi_open(txn, db.c_str(), 0, &dbi) != 0) throw std::runtime_error("no database " + db);
  body(txn, dbi);
  mdb_txn_commit(txn);
  mdb_env_close(env);
}

}  // namespace

void RawPut(const std::string& dir, const std::string& db, const std::string& key, const std::string& value) {
  WithRawTxn(dir, db, 0, [&](MDB_txn* txn, MDB_dbi dbi) {
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v{value.size(), const_cast<char*>(value.data())};
    if (mdb_put(txn, dbi, &k, &v, 0) != 0) throw std::runtime_error("raw put failed");
  });
}

std::string RawGet(const std::string& dir, const std::string& db, const std::string& key) {
  std::string out;
  WithRawTxn(dir, db, MDB_RDONLY, [&](MDB_txn* txn, MDB_dbi dbi) {
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
    if (mdb_get(txn, dbi, &k, &v) != 0) throw std::runtime_error("raw get: no such key");
    out.assign(static_cast<const char*>(v.mv_data), v.mv_size);
  });
  return out;
}

std::string KeyString(Key key) {
  KeyBytes b = EncodeKey(key);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

CommandResult RunCli(const std::string& args, const std::string& env) { return RunCliIn("", args, env); }

CommandResult RunCliIn(const std::string& dir, const std::string& args, const std::string& env) {
  TempDir capture;
  const std::string out = capture / "out", err = capture / "err";
  std::string command = (dir.empty() ? "" : "cd '" + dir + "' && ") + (env.empty() ? "" : "env " + env + " ") + std::string(TILEBANK_CLI) + " " + args +
                        " >" + out + " 2>" + err + " </dev/null";
  int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(out);
  result.err = ReadFile(err);
  return result;
}

void CheckRefused(const CommandResult& r, const std::string& message) {
  CHECK_MESSAGE(r.exit_code == 2, r.err);
  CHECK_MESSAGE(r.err.find(message) != std::string::npos, "the message names '" << message << "': " << r.err);
}

void CheckRefusedWritingNothing(const CommandResult& r, const std::string& message, const std::vector<std::string>& paths) {
  CheckRefused(r, message);
  for (const auto& path : paths) CHECK_MESSAGE(!std::filesystem::exists(path), path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string SourcePath(const std::string& relative) { return std::string(TILEBANK_SOURCE_DIR) + "/" + relative; }

}  // namespace tilebank::testing

#include <fcntl.h>
#include <algorithm>
#include <signal.h>

#include "repo/entry_json.h"

namespace tilebank::testing {

int SpawnCli(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv{const_cast<char*>(TILEBANK_CLI)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TILEBANK_CLI, argv.data());
    _exit(127);
  }
  return pid;
}

int WaitChild(int pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void WriteEntriesFile(const std::string& path, int first, int count, double base_us, const std::string& soc) {
  std::ofstream out(path, std::ios::trunc);
  out << json{{"tilebank_export", 1}, {"soc_version", soc}}.dump() << "\n";
  std::vector<Entry> entries;
  for (int m = first; m < first + count; ++m) entries.push_back(MatMulEntry(m, 16, 16, base_us + m % 7, 1000));
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.key() < b.key(); });
  for (const Entry& e : entries) out << EntryToJson(e).dump() << "\n";  // in export order
}

}  // namespace tilebank::testing
