#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "engine/target/isa_level.h"

// TILEBANK_ISA restricts the kernels these tests run as it does the CLI's (.ci/run runs them so).
int main(int argc, char** argv) {
  if (tilebank::Status s = tilebank::ApplyIsaRestriction(); !s.ok()) {
    std::fprintf(stderr, "tilebank_tests: %s\n", s.message().c_str());
    return 2;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
