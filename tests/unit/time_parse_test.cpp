// Wall-time parsing and formatting (src/core/io/time_parse.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "io/time_parse.h"
#include "test_support.h"

namespace {

using rldk::io::epoch_seconds_from_number;
using rldk::io::format_iso8601;
using rldk::io::parse_iso8601;

constexpr double JAN_1_2024 = 1704067200.0;  // 2024-01-01T00:00:00Z

struct IsoCase {
  std::string text;
  double epoch;
};

void PrintTo(const IsoCase& c, std::ostream* os) { *os << c.text; }

class ParseIso8601Valid : public ::testing::TestWithParam<IsoCase> {};

TEST_P(ParseIso8601Valid, Parses) {
  const auto& c = GetParam();
  double epoch = -12345.0;
  ASSERT_TRUE(parse_iso8601(c.text, epoch)) << c.text;
  EXPECT_NEAR(epoch, c.epoch, 1e-6) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseIso8601Valid,
    ::testing::Values(IsoCase{"2024-01-01T00:00:00Z", JAN_1_2024}, IsoCase{"2024-01-01t00:00:00z", JAN_1_2024},
                      IsoCase{"2024-01-01T00:00:00", JAN_1_2024},  // no offset: UTC
                      IsoCase{"2024-01-01 00:00:00", JAN_1_2024},  // space separator
                      IsoCase{"2024-01-01", JAN_1_2024},           // date only
                      IsoCase{"2024-01-01 12:30", JAN_1_2024 + 12 * 3600 + 30 * 60},
                      IsoCase{"2024-01-01T00:00:00.250Z", JAN_1_2024 + 0.25},
                      IsoCase{"2024-01-01T00:00:00,5Z", JAN_1_2024 + 0.5},
                      IsoCase{"2024-01-01T00:00:00.123456Z", JAN_1_2024 + 0.123456},
                      IsoCase{"2024-01-01T00:00:00+02:00", JAN_1_2024 - 7200},
                      IsoCase{"2024-01-01T00:00:00.250+02:00", JAN_1_2024 - 7200 + 0.25},
                      IsoCase{"2024-01-01T00:00:00-0530", JAN_1_2024 + 5 * 3600 + 30 * 60},
                      IsoCase{"2024-01-01T00:00:00-05:30", JAN_1_2024 + 5 * 3600 + 30 * 60},
                      IsoCase{"2024-01-01T00:00:00+05", JAN_1_2024 - 5 * 3600},
                      IsoCase{"2024-02-29T12:00:00Z", 1709208000.0},  // leap day
                      IsoCase{"2000-02-29", 951782400.0},              // leap day of a century divisible by 400
                      IsoCase{"1970-01-01T00:00:00Z", 0.0}, IsoCase{"1969-12-31T23:59:59Z", -1.0},
                      IsoCase{"2016-12-31T23:59:60Z", 1483228800.0},  // a leap second
                      IsoCase{"2100-01-01", 4102444800.0}, IsoCase{"2024-12-31T23:59:59Z", 1735689599.0}));

class ParseIso8601Invalid : public ::testing::TestWithParam<std::string> {};

TEST_P(ParseIso8601Invalid, Rejected) {
  double epoch = 0;
  EXPECT_FALSE(parse_iso8601(GetParam(), epoch)) << GetParam() << " -> " << epoch;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseIso8601Invalid,
    ::testing::Values("", "2024", "2024-01", "2024-1-01", "2024/01/01", "24-01-01", "2024-01-01X00:00:00",
                      // months and days out of range
                      "2024-00-10", "2024-13-01", "2024-01-00", "2024-01-32",
                      // days that do not exist in their month
                      "2024-02-30", "2023-02-29", "2100-02-29", "2024-04-31", "2024-06-31", "2024-09-31",
                      "2024-11-31",
                      // times out of range or incomplete
                      "2024-01-01T", "2024-01-01T12", "2024-01-01T12Z", "2024-01-01T1:00:00", "2024-01-01T24:00:00Z",
                      "2024-01-01T12:60:00Z", "2024-01-01T12:00:61Z", "2024-01-01T12:00:00.Z",
                      // offsets and trailing text
                      "2024-01-01T12:00:00+0", "2024-01-01T12:00:00+24:00", "2024-01-01T12:00:00+02:60",
                      "2024-01-01T12:00:00+02:0", "2024-01-01T12:00:00Zjunk", "2024-01-01T12:00:00 Z",
                      "2024-01-01T12:00:00Q"));

TEST(EpochSecondsFromNumber, MillisecondsAreDetectedAboveOneHundredBillion) {
  struct Case {
    double in, out;
  };
  for (const Case& c : {Case{0.0, 0.0}, Case{1234.5, 1234.5}, Case{1.7e9, 1.7e9}, Case{1704067200.25, 1704067200.25},
                        Case{1e11, 1e11},  // exactly the threshold: still seconds
                        Case{1704067200250.0, 1704067200.25}, Case{1.7e12, 1.7e9}, Case{-1.7e12, -1.7e9}}) {
    EXPECT_DOUBLE_EQ(epoch_seconds_from_number(c.in), c.out) << c.in;
  }
}

TEST(FormatIso8601, FormatsWithMilliseconds) {
  struct Case {
    double epoch;
    std::string text;
  };
  for (const Case& c : {Case{0.0, "1970-01-01T00:00:00.000Z"}, Case{JAN_1_2024 + 0.25, "2024-01-01T00:00:00.250Z"},
                        Case{-1.0, "1969-12-31T23:59:59.000Z"}, Case{-0.5, "1969-12-31T23:59:59.500Z"},
                        Case{-86400.0, "1969-12-31T00:00:00.000Z"}, Case{951782400.0, "2000-02-29T00:00:00.000Z"},
                        Case{4102444800.0, "2100-01-01T00:00:00.000Z"}, Case{1767225600.0, "2026-01-01T00:00:00.000Z"},
                        Case{0.9996, "1970-01-01T00:00:01.000Z"},  // rounds to the nearest millisecond
                        Case{1709208000.0 + 3723.004, "2024-02-29T13:02:03.004Z"},
                        Case{253402300799.0, "9999-12-31T23:59:59.000Z"}}) {
    EXPECT_EQ(format_iso8601(c.epoch), c.text) << c.epoch;
  }
  EXPECT_EQ(format_iso8601(rldk_test::NaN), "");
  EXPECT_EQ(format_iso8601(rldk_test::INF), "");
  EXPECT_EQ(format_iso8601(-rldk_test::INF), "");
  // Beyond the years 0000-9999 there is no date to write (and 1e16 s in milliseconds overflows 64 bits): in a
  // metrics line the number of seconds is kept instead.
  EXPECT_EQ(format_iso8601(1.7555555567225600e16), "");
  EXPECT_EQ(format_iso8601(-1e300), "");
  EXPECT_EQ(format_iso8601(-62167219200.0), "0000-01-01T00:00:00.000Z");
  EXPECT_EQ(rldk::io::json_time_value(1.7555555567225600e16), "17555555567225600");
  EXPECT_EQ(rldk::io::json_time_value(0.0), "\"1970-01-01T00:00:00.000Z\"");
}

TEST(FormatIso8601, RoundTripsThroughParse) {
  // Every 997 hours plus some milliseconds, from 1900 to 2100: crosses month ends, leap days and negative epochs.
  int checked = 0;
  for (double t = -2208988800.0; t < 4102444800.0; t += 997 * 3600.0 + 12.345) {
    double expected = std::round(t * 1000.0) / 1000.0;
    std::string text = format_iso8601(t);
    double parsed = 0;
    ASSERT_TRUE(parse_iso8601(text, parsed)) << text;
    ASSERT_NEAR(parsed, expected, 1e-5) << text;
    ++checked;
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
