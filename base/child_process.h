// A piece of work run in a child process of its own, for library code that can crash on input
// it was never meant to see (libonnx 1.12's checker, version converter and shape inference crash
// on some malformed models): the crash ends the child, and the caller gets a Status.
#pragma once
#include <functional>
#include <string>

#include "base/status.h"

namespace tilebank::engine {

// Forks, runs `work` in the child and hands back the bytes it returned, or its Status (kept as
// kInvalidInput with its message). A child that dies (a signal, an abort, a non-zero exit before it
// answered) gives kInvalidInput "<what> crashed (...)". The child leaves with _exit: no exit
// handlers, no destructors of this process's objects, default handlers for crash signals.
Result<std::string> RunInChildProcess(const std::function<Result<std::string>()>& work, const std::string& what);

}  // namespace tilebank::engine
