#include "base/child_process.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace tilebank::engine {

namespace {

// Writes all of `bytes` to `fd` (a pipe: partial writes happen).
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void RunChild(int fd, const std::function<Result<std::string>()>& work) {
  // A crash is the child's own end, not something for this process's handlers (sanitizers, a
  // fuzzer's crash report) to act on.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, SIG_DFL);
  std::string answer;
  try {
    Result<std::string> result = work();
    answer = result.ok() ? "O" + result.value() : "E" + result.status().message();
  } catch (const std::exception& e) {
    answer = std::string("E") + e.what();
  } catch (...) {
    answer = "Ean exception that is not a std::exception";
  }
  _exit(WriteAll(fd, answer) ? 0 : 3);
}

}  // namespace

Result<std::string> RunInChildProcess(const std::function<Result<std::string>()>& work, const std::string& what) {
  int fds[2];
  if (pipe(fds) != 0) return Status::IoError(what + ": cannot create a pipe: " + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::IoError(what + ": cannot fork: " + strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    RunChild(fds[1], work);
  }
  close(fds[1]);
  std::string answer;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return Status::InvalidInput(what + " crashed (signal " + std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status)) + ")");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty())
    return Status::InvalidInput(what + " crashed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  if (answer[0] == 'E') return Status::InvalidInput(answer.substr(1));
  return answer.substr(1);
}

}  // namespace tilebank::engine
