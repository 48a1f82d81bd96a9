// The ISA restriction from the command line (--isa, TILEBANK_ISA): a level the host lacks or that
// does not exist is refused with exit 2, and a lower level names the soc_version, the bank a tune
// writes and the Halide target the kernels are compiled for.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/isa_level.h"
#include "engine/core/soc_version.h"
#include "tests/onnx_model_builder.h"
#include "tests/test_support.h"

using namespace tilebank;
using namespace tilebank::testing;

namespace {

// The host's own widest level (TILEBANK_ISA may restrict this test process, not the host).
IsaLevel HostWidest() {
  const CpuFacts cpu = ReadHostCpu();
  return IsaOfFlags(cpu.arch, cpu.flags).value_or(IsaLevel::kSse);
}

}  // namespace

TEST_CASE("isa: an unknown level, or one the host lacks, is refused with exit 2 naming it") {
  auto unknown = RunCli("--isa avx9000 bank stats --bank /nonexistent");
  CHECK(unknown.exit_code == 2);
  CHECK_MESSAGE(unknown.err.find("avx9000") != std::string::npos, unknown.err);
  CHECK_MESSAGE(unknown.err.find("avx2") != std::string::npos, unknown.err);  // the levels are listed
  auto from_env = RunCli("bank stats --bank /nonexistent", "TILEBANK_ISA=nonsense");
  CHECK(from_env.exit_code == 2);
  CHECK(from_env.err.find("nonsense") != std::string::npos);
  if (HostWidest() != IsaLevel::kAvx512 && HostWidest() != IsaLevel::kNeon && HostWidest() != IsaLevel::kSve2) {
    auto wider = RunCli("run -m /nonexistent.onnx --isa avx512");  // after the subcommand too
    CHECK(wider.exit_code == 2);
    CHECK_MESSAGE(wider.err.find("would not run here") != std::string::npos, wider.err);
  }
}

TEST_CASE("isa: a model runs and tunes restricted to a lower level, which its soc_version and Halide target name") {
  if (ReadHostCpu().arch != "x86_64") return;
  TempDir dir;
  ModelBuilder b;
  b.Input("x", {16, 64});
  b.Weight("w", {64, 48});
  b.Node("MatMul", {"x", "w"}, {"mm"});
  b.Node("Softmax", {"mm"}, {"y"});
  b.Output("y", {16, 48});
  const std::string model = b.Save(dir / "m.onnx");
  const std::string bank = dir / "bank";
  for (const char* level : {"avx", "sse"}) {
    CAPTURE(level);
    auto run = RunCli(std::string("run --isa ") + level + " -m " + model + " --bank " + bank + " --repeat 1 --warmup 0 --json");
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const nlohmann::json out = nlohmann::json::parse(run.out);
    const std::string soc = out.at("soc_version");
    CHECK(IsaOfSocVersion(soc) == ParseIsa(level));
    CHECK(out.at("isa") == level);
    const std::string target = out.at("halide_target");
    CHECK_MESSAGE(target.find("avx2") == std::string::npos, target);
    CHECK_MESSAGE(target.find("avx512") == std::string::npos, target);
    if (std::string(level) == "sse") CHECK_MESSAGE(target.find("-avx") == std::string::npos, target);
  }
  // A tune restricted to avx writes the bank of the avx soc_version.
  auto tune = RunCli("tune -j 2 -m " + model + " --trials 2 --bank " + bank + " --output " + (dir / "out"), "TILEBANK_ISA=avx");
  REQUIRE_MESSAGE(tune.exit_code == 0, tune.err);
  bool avx_bank = false;
  for (const auto& d : std::filesystem::directory_iterator(bank)) avx_bank |= IsaOfSocVersion(d.path().filename().string()) == IsaLevel::kAvx;
  CHECK(avx_bank);
}
