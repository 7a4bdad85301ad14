#include "io/time_parse.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace rldk::io {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

int days_in_month(int year, int month) {
  static const int DAYS[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : DAYS[month - 1];
}

bool digits(std::string_view s, size_t pos, size_t count, int& out) {
  if (pos + count > s.size()) return false;
  out = 0;
  for (size_t i = 0; i < count; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

}  // namespace

bool parse_iso8601(std::string_view s, double& epoch_seconds) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(s, 0, 4, year) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, month) || s[7] != '-' ||
      !digits(s, 8, 2, day)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return false;
  size_t pos = 10;
  double fraction = 0.0;
  int offset_seconds = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return false;
    ++pos;
    if (!digits(s, pos, 2, hour) || pos + 2 >= s.size() || s[pos + 2] != ':' || !digits(s, pos + 3, 2, minute)) {
      return false;
    }
    pos += 5;
    if (pos < s.size() && s[pos] == ':') {
      if (!digits(s, pos + 1, 2, second)) return false;
      pos += 3;
    }
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      double scale = 0.1;
      size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        fraction += (s[pos] - '0') * scale;
        scale /= 10;
        ++pos;
      }
      if (pos == start) return false;
    }
    if (pos < s.size()) {
      char z = s[pos];
      if ((z == 'Z' || z == 'z') && pos + 1 == s.size()) {
        pos = s.size();
      } else if (z == '+' || z == '-') {
        int oh = 0, om = 0;
        if (!digits(s, pos + 1, 2, oh)) return false;
        size_t after = pos + 3;
        if (after < s.size() && s[after] == ':') ++after;
        if (after < s.size()) {
          if (!digits(s, after, 2, om)) return false;
          after += 2;
        }
        if (after != s.size() || oh > 23 || om > 59) return false;
        offset_seconds = (z == '+' ? 1 : -1) * (oh * 3600 + om * 60);
        pos = s.size();
      } else {
        return false;
      }
    }
  }
  if (hour > 23 || minute > 59 || second > 60) return false;
  int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  epoch_seconds = static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds) + fraction;
  return true;
}

double epoch_seconds_from_number(double value) { return std::fabs(value) > 1e11 ? value / 1000.0 : value; }

std::string format_iso8601(double epoch_seconds) {
  // Years 0000-9999 only: beyond them ISO 8601 needs an expanded form, and the millisecond count below would
  // overflow a 64-bit integer long before (a logged timestamp of 1e16 seconds is garbage, not a date).
  constexpr double FIRST = -62167219200.0, LAST = 253402300799.999;  // 0000-01-01T00:00:00Z, 9999-12-31T23:59:59.999Z
  if (!std::isfinite(epoch_seconds) || epoch_seconds < FIRST || epoch_seconds > LAST) return "";
  auto total_ms = static_cast<int64_t>(std::llround(epoch_seconds * 1000.0));
  int64_t ms = ((total_ms % 1000) + 1000) % 1000;
  int64_t secs = (total_ms - ms) / 1000;
  int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
  int64_t rem = secs - days * 86400;
  // civil_from_days
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(y), m,
                d, static_cast<long long>(rem / 3600), static_cast<long long>((rem % 3600) / 60),
                static_cast<long long>(rem % 60), static_cast<long long>(ms));
  return buffer;
}

std::string json_time_value(double epoch_seconds) {
  std::string iso = format_iso8601(epoch_seconds);
  if (!iso.empty()) return "\"" + iso + "\"";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), epoch_seconds);  // shortest exact form
  return ec == std::errc() ? std::string(buffer, end) : std::string("null");
}

}  // namespace rldk::io
