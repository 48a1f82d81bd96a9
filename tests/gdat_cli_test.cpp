// `tilebank tune -j 4 --gradients` end to end on a profile recorded on a real machine
// (data/gradient_profile_resnet18.json, scripts/record_gradient_profile.py): the result file, the
// grad entry, a hit on the next run, validate and export, and bad profiles refused with nothing written.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/test_support.h"

namespace tilebank::testing {
namespace {

const std::string kProfile = std::string(TILEBANK_SOURCE_DIR) + "/data/gradient_profile_resnet18.json";

nlohmann::json OnlyResultFile(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("aoe_result_gdat_", 0) == 0) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  return nlohmann::json::parse(ReadFile(files[0]));
}

TEST_CASE("tune -j 4 --gradients: plans offline, stores a grad entry, writes the result file, the next run hits") {
  TempDir dir;
  const std::string common = " --bank " + (dir / "bank") + " --gradients " + kProfile;
  auto first = RunCli("tune -j 4" + common + " --output " + (dir / "out1"));
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.out.find("resnet18 process finished. Performance improved by") != std::string::npos);
  const auto result = OnlyResultFile(dir / "out1");
  CHECK(result[0]["basic"]["tuning_name"] == "resnet18");
  const auto& gdat = result[1]["GDAT"];
  CHECK(gdat["gradient_num"] == 62);
  CHECK(gdat["world_size"] == 2);
  CHECK(gdat["communicator"] == "gloo/tcp");
  // The anchors then one plan per segment count, each with its prediction; the kept plan is the
  // soonest, and no anchor is sooner.
  const auto& plans = gdat["plans"];
  REQUIRE(plans.size() == 6 + 8);
  CHECK(plans[2]["plan"] == "ddp (1 MB, then 25 MB)");
  double soonest_anchor = 1e300;
  for (int i = 0; i < 6; ++i) soonest_anchor = std::min(soonest_anchor, plans[i]["predicted_finish(ms)"].get<double>());
  CHECK(plans[6]["plan"] == "tuned");
  CHECK(plans[6]["predicted_finish(ms)"].get<double>() <= soonest_anchor + 1e-9);
  CHECK(gdat["performance_before_tune(ms)"] == plans[2]["predicted_finish(ms)"]);
  const std::string status = gdat["status"];
  CHECK((status == "add" || status == "unsatisfied"));
  CHECK(gdat["repo_summary"]["total_num"] == 1);
  auto validate = RunCli("bank validate --bank " + (dir / "bank"));
  CHECK_MESSAGE(validate.exit_code == 0, validate.out << validate.err);
  if (status == "add") {
    auto exported = RunCli("bank export --bank " + (dir / "bank") + " --output " + (dir / "bank.jsonl"));
    REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
    const std::string text = ReadFile(dir / "bank.jsonl");
    CHECK(text.find("\"gdat.split\"") != std::string::npos);
    CHECK(text.find(plans[6]["ends"].get<std::string>()) != std::string::npos);
    auto second = RunCli("tune -j 4" + common + " --output " + (dir / "out2"));
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    CHECK(OnlyResultFile(dir / "out2")[1]["GDAT"]["status"] == "hit");
    // Fewer segments allowed: another plan, replacing the entry only with --repeat-tune.
    auto capped = RunCli("tune -j 4" + common + " --max-segments 2 --repeat-tune --output " + (dir / "out3"));
    REQUIRE_MESSAGE(capped.exit_code == 0, capped.err);
    const nlohmann::json capped_gdat = OnlyResultFile(dir / "out3")[1]["GDAT"];
    CHECK(capped_gdat["plans"].size() == 6 + 2);
  }
}

TEST_CASE("tune -j 4 --measured keeps the plan measured fastest, a prediction does not replace it, export --format aoe-gdat") {
  TempDir dir;
  const std::string common = " --bank " + (dir / "bank") + " --gradients " + kProfile;
  auto printed = RunCli("tune -j 4" + common + " --print-plans");
  REQUIRE_MESSAGE(printed.exit_code == 0, printed.err);
  CHECK(!std::filesystem::exists(dir / "bank"));  // --print-plans writes nothing
  const auto plans = nlohmann::json::parse(printed.out)["plans"];
  REQUIRE(plans.size() == 6 + 8);
  const std::string ddp_ends = plans[2]["ends"], tuned_ends = plans[6]["ends"];
  auto measured = [&](double ddp_ms, double tuned_ms) {
    return nlohmann::json{{"plans",
                           {{{"plan", "ddp"}, {"ends", ddp_ends}, {"iteration_ms", {ddp_ms, ddp_ms + 2, ddp_ms - 1}},
                             {"finish_ms", {70, 71, 72}}, {"hangover_ms", {12, 12, 13}}},
                            {{"plan", "tuned 4"}, {"ends", tuned_ends}, {"iteration_ms", {tuned_ms, tuned_ms + 1, tuned_ms - 2}},
                             {"finish_ms", {60, 61, 62}}, {"hangover_ms", {1, 1.5, 2}}}}}};
  };
  WriteFile(dir / "m.json", measured(100, 80).dump());
  auto kept = RunCli("tune -j 4" + common + " --measured " + (dir / "m.json") + " --output " + (dir / "out1"));
  REQUIRE_MESSAGE(kept.exit_code == 0, kept.err);
  CHECK(kept.out.find("median training iteration, measured: 100.000 ms with DDP's default plan, 80.000 ms with the plan kept") != std::string::npos);
  const auto gdat = OnlyResultFile(dir / "out1")[1]["GDAT"];
  CHECK(gdat["status"] == "add");
  CHECK(gdat["verified"] == "measured");
  CHECK(gdat["hangover_before_tune(ms)"] == 12.0);
  CHECK(gdat["hangover_after_tune(ms)"] == 1.5);
  int with_measurement = 0;
  for (const auto& p : gdat["plans"])
    if (p.contains("measured_iteration(ms)")) {
      ++with_measurement;
      CHECK(p.contains("model_error"));
    }
  CHECK(with_measurement >= 2);
  auto exported = RunCli("bank export -o - --bank " + (dir / "bank"));
  CHECK(exported.out.find("\"verified\":\"measured\"") != std::string::npos);
  CHECK(exported.out.find(tuned_ends) != std::string::npos);
  // A prediction does not replace a measured plan.
  auto predicted = RunCli("tune -j 4" + common + " --repeat-tune --output " + (dir / "out2"));
  REQUIRE_MESSAGE(predicted.exit_code == 0, predicted.err);
  CHECK(OnlyResultFile(dir / "out2")[1]["GDAT"]["status"] == "reserved");
  // A plan dropped in an early round is reported but not kept, however fast its few samples.
  auto dropped = measured(100, 99.5);
  dropped["plans"].push_back({{"plan", "one bucket"}, {"ends", "62"}, {"iteration_ms", {50, 51}}, {"finish_ms", {40, 41}},
                              {"hangover_ms", {30, 30}}, {"finalist", false}});
  WriteFile(dir / "m3.json", dropped.dump());
  auto not_kept = RunCli("tune -j 4" + common + " --measured " + (dir / "m3.json") + " --repeat-tune --output " + (dir / "out4"));
  REQUIRE_MESSAGE(not_kept.exit_code == 0, not_kept.err);
  const auto dropped_gdat = OnlyResultFile(dir / "out4")[1]["GDAT"];
  CHECK(dropped_gdat["status"] == "reserved");
  bool reported = false;
  for (const auto& p : dropped_gdat["plans"]) reported = reported || (p["ends"] == "62" && p["finalist"] == false);
  CHECK(reported);
  // A measurement where nothing beats DDP's default keeps what is there.
  WriteFile(dir / "m2.json", measured(100, 99.5).dump());
  auto no_gain = RunCli("tune -j 4" + common + " --measured " + (dir / "m2.json") + " --output " + (dir / "out3"));
  REQUIRE_MESSAGE(no_gain.exit_code == 0, no_gain.err);
  CHECK(OnlyResultFile(dir / "out3")[1]["GDAT"]["status"] == "reserved");

  std::filesystem::create_directories(dir / "aoe");
  auto aoe = RunCli("bank export --format aoe-gdat -o " + (dir / "aoe") + " --bank " + (dir / "bank"));
  REQUIRE_MESSAGE(aoe.exit_code == 0, aoe.err);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "aoe")) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  CHECK(files[0].size() > std::string("_gradient_fusion.json").size());
  CHECK(files[0].find("_gradient_fusion.json") == files[0].size() - std::string("_gradient_fusion.json").size());
  const auto fusion = nlohmann::json::parse(ReadFile(files[0]));
  REQUIRE(fusion.size() == 1);
  CHECK(fusion[0]["modelhash"].get<std::string>().size() == 16);
  const auto& value = fusion[0]["modelvalue"];
  CHECK(value["gradientSize"].size() == 62);
  CHECK(value["gradientSize"][0] == 4000);  // fc.bias: 1000 floats
  CHECK(value["gradientTime"].size() == 62);
  CHECK(value["splitIndex"].back() == 61);
  CHECK(value["verified"] == "measured");
  auto bad_format = RunCli("bank export --format aoe -o " + (dir / "x.json") + " --bank " + (dir / "bank"));
  CHECK(bad_format.exit_code == 2);
  CHECK(!std::filesystem::exists(dir / "x.json"));
}

TEST_CASE("tune -j 4 --measured: a measurement file without DDP's plan, or with ends that do not fit, is refused with exit 2") {
  TempDir dir;
  auto refused = [&](const std::string& text, const std::string& expected) {
    WriteFile(dir / "m.json", text);
    auto r = RunCli("tune -j 4 --gradients " + kProfile + " --measured " + (dir / "m.json") + " --bank " + (dir / "bank") + " --output " + (dir / "out"));
    CHECK_MESSAGE(r.exit_code == 2, expected << ": " << r.err);
    CHECK_MESSAGE(r.err.find(expected) != std::string::npos, r.err);
    CHECK(!std::filesystem::exists(dir / "bank"));
    CHECK(!std::filesystem::exists(dir / "out"));
  };
  const std::string plan = R"({"plan":"tuned","ends":"17,52,59,62","iteration_ms":[1],"finish_ms":[1],"hangover_ms":[1]})";
  refused(R"({"plans":[)" + plan + "]}", "no plan is named \"ddp\"");
  refused(R"({"plans":[{"plan":"ddp","ends":"17,52,59,70","iteration_ms":[1],"finish_ms":[1],"hangover_ms":[1]}]})", "plans[0].ends");
  refused(R"({"plans":[{"plan":"ddp","ends":"62","iteration_ms":[1,2],"finish_ms":[1],"hangover_ms":[1]}]})", "one sample per iteration");
  refused(R"({"plans":[{"plan":"ddp","ends":"62","iteration_ms":[],"finish_ms":[],"hangover_ms":[]}]})", "plans[0].iteration_ms must list at least one sample");
  refused(R"({"plans":[{"plan":"ddp","ends":"62","iteration_ms":[1],"finish_ms":[1],"hangover_ms":[1],"finalist":false}]})", "must be a finalist");
  refused(R"({"plans":[{"plan":"ddp","ends":"62","iteration_ms":[1],"finish_ms":[1],"hangover_ms":[1],"finalist":1}]})", "finalist must be true or false");
  refused("[1,2", "is not valid JSON");
  auto wrong_job = RunCli("tune -j 2 --measured " + (dir / "m.json") + " --bank " + (dir / "bank"));
  CHECK(wrong_job.exit_code == 2);
}

TEST_CASE("tune -j 4: a bad profile or flag is refused with exit 2, naming the field, and nothing is written") {
  TempDir dir;
  auto profile = nlohmann::json::parse(ReadFile(kProfile));
  auto refused = [&](const nlohmann::json& p, const std::string& expected, const std::string& flags = "") {
    WriteFile(dir / "p.json", p.dump());
    auto r = RunCli("tune -j 4 --gradients " + (dir / "p.json") + " --bank " + (dir / "bank") + " --output " + (dir / "out") + flags);
    CHECK_MESSAGE(r.exit_code == 2, expected << ": " << r.err);
    CHECK_MESSAGE(r.err.find(expected) != std::string::npos, r.err);
    CHECK(!std::filesystem::exists(dir / "bank"));
    CHECK(!std::filesystem::exists(dir / "out"));
  };
  auto p = profile;
  p["gradients"][3]["ready_ms"] = -1;
  refused(p, "gradients[3].ready_ms must be a number >= 0");
  p = profile;
  p["gradients"][5]["ready_ms"] = 0.0;
  refused(p, "gradients[5].ready_ms goes back in time");
  p = profile;
  p["gradients"][0]["numel"] = "many";
  refused(p, "gradients[0].numel must be an integer >= 1");
  p = profile;
  p["allreduce"] = nlohmann::json::array({{{"bytes", 4}, {"ms", 0.1}}});
  refused(p, "\"allreduce\" must list the AllReduce time of at least two message sizes");
  p = profile;
  p["ranks_per_node"] = 3;
  refused(p, "\"ranks_per_node\" is larger than \"world_size\"");
  p = profile;
  p.erase("world_size");
  refused(p, "\"world_size\" is missing");
  refused(profile, "--max-segments must be at least 1", " --max-segments 0");
  WriteFile(dir / "p.json", "{not json");
  auto r = RunCli("tune -j 4 --gradients " + (dir / "p.json") + " --bank " + (dir / "bank"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is not valid JSON") != std::string::npos);
  auto none = RunCli("tune -j 4 --bank " + (dir / "bank"));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--gradients PROFILE.json") != std::string::npos);
  auto wrong_job = RunCli("tune -j 2 --gradients " + kProfile + " --bank " + (dir / "bank"));
  CHECK(wrong_job.exit_code == 2);
  CHECK(wrong_job.err.find("for --job-type 4") != std::string::npos);
  CHECK(!std::filesystem::exists(dir / "bank"));
}

}  // namespace
}  // namespace tilebank::testing
