// Where a job tunes: the bank root, the soc_version (the bank's directory under the root), the
// host's fingerprint, the result file's directory and whether entries already in the bank are tuned
// again. Every job type's options (OPAT, SGAT, GDAT) carry these fields; the CLI
// (tools/tune_command.cpp) and Python's tilebank.tune (python/native/tune.cpp) resolve them each
// from their own flags and fill the options with PlaceJob.
#pragma once
#include <string>

namespace tilebank::engine {

struct JobPlace {
  std::string bank_root, soc_version, fingerprint, output_dir;
  bool repeat_tune = false;
};

template <class JobOptions>
void PlaceJob(const JobPlace& place, JobOptions* o) {
  o->bank_root = place.bank_root;
  o->soc_version = place.soc_version;
  o->fingerprint = place.fingerprint;
  o->output_dir = place.output_dir;
  o->repeat_tune = place.repeat_tune;
}

}  // namespace tilebank::engine
