#include <doctest/doctest.h>

#include "repo/key.h"

using namespace tilebank;

TEST_CASE("keys encode big-endian so that byte order is numeric order") {
  KeyBytes a = EncodeKey(0x0102030405060708ull);
  CHECK(a[0] == 0x01);
  CHECK(a[7] == 0x08);
  CHECK(DecodeKey(a.data()) == 0x0102030405060708ull);
  CHECK(EncodeKey(5) < EncodeKey(256));
}

TEST_CASE("keys print per kind and parse back") {
  CHECK(FormatKey(EntryKind::kOp, 0xabcull) == "0x0000000000000abc");
  CHECK(FormatKey(EntryKind::kGraph, 1024942313106047484ull) == "1024942313106047484");
  CHECK(*ParseKey("0x0000000000000abc") == 0xabcull);
  CHECK(*ParseKey("1024942313106047484") == 1024942313106047484ull);
  CHECK(*ParseKey(FormatKey(EntryKind::kGrad, ~0ull)) == ~0ull);
  CHECK_FALSE(ParseKey("").ok());
  CHECK_FALSE(ParseKey("0x").ok());
  CHECK_FALSE(ParseKey("12ab").ok());
  CHECK_FALSE(ParseKey("99999999999999999999999").ok());
}

TEST_CASE("a key is the xxh3-64 of the descriptor") {
  CHECK(KeyOfDescriptor("abc") == KeyOfDescriptor(std::string("abc")));
  CHECK(KeyOfDescriptor("abc") != KeyOfDescriptor("abd"));
}
