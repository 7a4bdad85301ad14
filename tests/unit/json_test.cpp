// rldk::Json (include/rldk/json.h): sorted keys, shortest round-trip doubles, non-finite numbers as strings and
// string escaping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "rldk/json.h"
#include "test_support.h"

namespace {

using rldk::Json;
using rldk_test::INF;
using rldk_test::NaN;

TEST(Json, ObjectKeysAreSorted) {
  Json o;
  o["zeta"] = 1;
  o["alpha"] = "a";
  o["Mid"] = nullptr;
  o["beta"] = true;
  o["_u"] = false;
  EXPECT_EQ(o.dump(-1), R"({"Mid":null,"_u":false,"alpha":"a","beta":true,"zeta":1})");
}

TEST(Json, NestedAccessCreatesObjectsAndArrays) {
  Json root;
  root["b"]["y"] = 2;
  root["b"]["x"] = 1;
  root["a"].push_back(1);
  root["a"].push_back("two");
  root["a"].push_back(Json::Object{});
  root["a"].push_back(Json::Array{});
  EXPECT_EQ(root.dump(-1), R"({"a":[1,"two",{},[]],"b":{"x":1,"y":2}})");
  EXPECT_EQ(Json().dump(-1), "null");
}

TEST(Json, PrettyPrinting) {
  Json o;
  o["b"] = Json::Array{1, 2};
  o["a"] = Json::Object{};
  o["c"]["d"] = "e";
  EXPECT_EQ(o.dump(), "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {\n    \"d\": \"e\"\n  }\n}\n");
  EXPECT_EQ(o.dump(4), "{\n    \"a\": {},\n    \"b\": [\n        1,\n        2\n    ],\n    \"c\": {\n        \"d\": "
                       "\"e\"\n    }\n}\n");
  EXPECT_EQ(Json(3).dump(), "3\n");
}

TEST(Json, Integers) {
  struct Case {
    Json value;
    const char* text;
  };
  for (const Case& c : {Case{Json(0), "0"}, Case{Json(-7), "-7"}, Case{Json(int64_t{9007199254740993}), "9007199254740993"},
                        Case{Json(INT64_MIN), "-9223372036854775808"}, Case{Json(uint32_t{4000000000u}), "4000000000"},
                        Case{Json(uint64_t{42}), "42"}}) {
    EXPECT_EQ(c.value.dump(-1), c.text);
  }
}

// Unsigned 64-bit values (seeds, hashes, byte counts) print as the number they are.
TEST(Json, LargeUnsignedIntegers) {
  EXPECT_EQ(Json(uint64_t{9223372036854775807u}).dump(-1), "9223372036854775807");
  EXPECT_EQ(Json(uint64_t{9223372036854775808u}).dump(-1), "9223372036854775808");
  EXPECT_EQ(Json(uint64_t{18446744073709551615u}).dump(-1), "18446744073709551615");
}

TEST(Json, DoublesInShortestRoundTripForm) {
  struct Case {
    double value;
    const char* text;
  };
  for (const Case& c : {Case{0.1, "0.1"}, Case{1.0, "1"}, Case{-0.0, "-0"}, Case{2.5, "2.5"}, Case{100.0, "100"},
                        Case{1.0 / 3.0, "0.3333333333333333"}, Case{0.1 + 0.2, "0.30000000000000004"},
                        Case{1e21, "1e+21"}, Case{1e-7, "1e-07"}, Case{123456.789, "123456.789"},
                        Case{5e-324, "5e-324"}, Case{1.7976931348623157e308, "1.7976931348623157e+308"},
                        Case{-1234.5e-10, "-1.2345e-07"}}) {
    EXPECT_EQ(Json(c.value).dump(-1), c.text) << c.value;
  }
}

TEST(Json, DoublesRoundTripExactly) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value)) continue;
    std::string text = Json(value).dump(-1);
    double back = std::strtod(text.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &value, sizeof(value)), 0) << text;
    // Shortest: one digit fewer would not read back (checked through the 17-digit bound).
    ASSERT_LE(text.size(), 24u) << text;
  }
}

TEST(Json, NonFiniteNumbersAreStrings) {
  EXPECT_EQ(Json(NaN).dump(-1), "\"NaN\"");
  EXPECT_EQ(Json(INF).dump(-1), "\"Infinity\"");
  EXPECT_EQ(Json(-INF).dump(-1), "\"-Infinity\"");
  Json o;
  o["loss"] = NaN;
  o["values"] = Json::Array{1.5, INF, -INF};
  EXPECT_EQ(o.dump(-1), R"({"loss":"NaN","values":[1.5,"Infinity","-Infinity"]})");
}

TEST(Json, StringEscaping) {
  struct Case {
    const char* name;
    std::string in;
    std::string out;  // the JSON text, quotes included
  };
  const Case cases[] = {
      {"plain", "hello", R"("hello")"},
      {"quote_and_backslash", "a\"b\\c", R"("a\"b\\c")"},
      {"slash_not_escaped", "a/b", R"("a/b")"},
      {"common_controls", "\n\r\t", R"("\n\r\t")"},
      {"other_controls", std::string("\x00\x01\x08\x0c\x1f\x7f", 6), R"("\u0000\u0001\u0008\u000c\u001f\u007f")"},
      {"utf8_two_byte", "caf\xC3\xA9", "\"caf\xC3\xA9\""},
      {"utf8_three_byte", "\xE2\x9C\xA8", "\"\xE2\x9C\xA8\""},
      {"utf8_four_byte", "\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""},
      {"invalid_byte", "a\xFF" "b", R"("a\ufffdb")"},
      {"lone_continuation", "\x80", R"("\ufffd")"},
      {"truncated_sequence_at_end", "a\xC3", R"("a\ufffd")"},
      {"truncated_sequence_in_middle", "\xE2\x9C" "x", R"("\ufffd\ufffdx")"},
      {"overlong_two_byte", "\xC0\xAF", R"("\ufffd\ufffd")"},
      {"overlong_three_byte", "\xE0\x80\xAF", R"("\ufffd\ufffd\ufffd")"},
      {"utf16_surrogate", "\xED\xA0\x80", R"("\ufffd\ufffd\ufffd")"},
      {"above_max_code_point", "\xF4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},
      {"max_code_point", "\xF4\x8F\xBF\xBF", "\"\xF4\x8F\xBF\xBF\""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Json(c.in).dump(-1), c.out) << c.name;
    Json o;
    o[c.in] = 1;
    EXPECT_EQ(o.dump(-1), "{" + c.out + ":1}") << c.name << " (as a key)";
  }
}

}  // namespace
