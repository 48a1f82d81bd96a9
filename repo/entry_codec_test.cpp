#include "repo/entry_codec.h"

#include <doctest/doctest.h>

#include <cmath>

#include "tests/test_support.h"

using namespace tilebank;

TEST_CASE("an entry survives encoding") {
  Entry e = testing::MatMulEntry(64, 128, 256, 12.5);
  e.policy.insert(e.policy.begin() + 1, {"ratio", 0.75});  // policies are sorted by name
  e.generation = 7;
  auto back = DecodeEntry(EncodeEntry(e));
  REQUIRE(back.ok());
  CHECK(back->descriptor == e.descriptor);
  CHECK(back->policy == e.policy);
  CHECK(back->after == e.after);
  CHECK(back->before == e.before);
  CHECK(back->generation == 7);
  CHECK(back->origin_host == "test-host");
  CHECK(EncodeEntry(*back) == EncodeEntry(e));
}

TEST_CASE("every flipped byte of a stored value is detected") {
  const std::string stored = EncodeEntry(testing::MatMulEntry(64, 128, 256, 12.5));
  for (size_t i = 0; i < stored.size(); ++i) {
    std::string bad = stored;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    auto decoded = DecodeEntry(bad);
    CHECK_MESSAGE(!decoded.ok(), "flip at byte " << i << " went unnoticed");
  }
}

TEST_CASE("truncated and empty values are corrupt, not crashes") {
  const std::string stored = EncodeEntry(testing::GradEntry(8, 100));
  for (size_t n : {size_t{0}, size_t{4}, size_t{8}, size_t{16}, stored.size() / 2, stored.size() - 1}) {
    auto decoded = DecodeEntry(stored.substr(0, n));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.status().code() == StatusCode::kCorrupt);
  }
}

TEST_CASE("non-finite numbers are corrupt: they cannot round-trip or be exported") {
  Entry nan_knob = testing::MatMulEntry(8, 8, 8, 1.0);
  nan_knob.policy.insert(nan_knob.policy.begin() + 1, {"ratio", std::nan("")});
  CHECK(DecodeEntry(EncodeEntry(nan_knob)).status().code() == StatusCode::kCorrupt);
  Entry inf_time = testing::MatMulEntry(8, 8, 8, 1.0);
  inf_time.after.median_us = HUGE_VAL;
  CHECK(DecodeEntry(EncodeEntry(inf_time)).status().code() == StatusCode::kCorrupt);
}

TEST_CASE("RestampStored: new generation and revision, every other field kept") {
  Entry e = testing::MatMulEntry(32, 64, 16, 7.5);
  e.generation = 5;
  e.revision = 2;
  e.superseded_generation = 4;  // a history record made live again
  const std::string stored = EncodeEntry(e);
  auto restamped = RestampStored(stored, 9, 3);
  REQUIRE(restamped.has_value());
  CHECK(restamped->size() == stored.size());
  auto decoded = DecodeEntry(*restamped);  // checksum and structure hold
  REQUIRE(decoded.ok());
  CHECK(decoded->SameContent(e));
  CHECK(decoded->generation == 9);
  CHECK(decoded->revision == 3);
  CHECK(decoded->superseded_generation == 0);

  // A field at its default is not in the buffer: there is nothing to restamp in place.
  e.generation = 0;
  CHECK_FALSE(RestampStored(EncodeEntry(e), 9, 3).has_value());
}
