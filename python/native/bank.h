// tilebank.Bank: a knowledge bank of one soc_version, with the command line's rules (a bank of
// another soc_version or a newer format refused, merges only within a soc_version, policies a
// kernel cannot run refused before anything is written).
#pragma once
#include <pybind11/pybind11.h>

namespace tilebank::python {

void RegisterBank(pybind11::module_& m);

}  // namespace tilebank::python
