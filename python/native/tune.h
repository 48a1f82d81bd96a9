// tilebank._tune: a tuning job of any type run in this process, with the GIL released while it
// tunes. Its events reach Python callbacks (with the GIL held); a callback returning True stops
// the job after the current task (its checkpoint stays unfinished: reload goes on), and one that
// raises stops it too, the exception raised once the job has stopped. tilebank.tune (Python) wraps
// it and returns a TuneResult.
#pragma once
#include <pybind11/pybind11.h>

namespace tilebank::python {

void RegisterTune(pybind11::module_& m);

}  // namespace tilebank::python
