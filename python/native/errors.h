// tilebank's Python exceptions: a C++ Status becomes one, with the message the CLI prints.
//   tilebank.Error (RuntimeError)          every failure
//   tilebank.InvalidInputError (+ValueError)  a malformed file, argument or input (the CLI's exit 2)
//   tilebank.NotFoundError (+FileNotFoundError)
//   tilebank.RefusedError                  a valid request refused (another soc_version, a newer format)
#pragma once
#include <pybind11/pybind11.h>

#include "base/status.h"

namespace tilebank::python {

void RegisterErrors(pybind11::module_& m);

// Raises the exception of `status`'s code (throws pybind11::error_already_set).
[[noreturn]] void Raise(const Status& status);

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) Raise(status);
}
template <class T>
T ValueOrRaise(Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result.value());
}

}  // namespace tilebank::python
