// Wall times as trainers write them: ISO-8601 strings or Unix epoch numbers (seconds or milliseconds).
#pragma once

#include <string>
#include <string_view>

namespace rldk::io {

// "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.250+02:00", "2024-01-01 00:00:00" (UTC assumed without an offset).
bool parse_iso8601(std::string_view text, double& epoch_seconds);
// Epoch numbers above 1e11 are taken as milliseconds: 1e11 seconds is the year 5138, 1e11 ms is 1973.
double epoch_seconds_from_number(double value);
// Formats epoch seconds as "YYYY-MM-DDTHH:MM:SS.mmmZ"; empty for a time outside the years 0000-9999 or not finite.
std::string format_iso8601(double epoch_seconds);
// A finite wall time as a JSON value for a metrics line: the ISO 8601 string in quotes, or, outside the years
// 0000-9999 (a garbage timestamp), its number of seconds, kept rather than dropped.
std::string json_time_value(double epoch_seconds);

}  // namespace rldk::io
