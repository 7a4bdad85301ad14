// JSON text helpers shared by every writer.
//
// One way to print a double everywhere (reports, ingest output, messages): the shortest text that reads back to the
// same value, so outputs are stable and round-trip exactly. Non-finite values print as NaN, Infinity, -Infinity,
// the tokens Python's json module reads.
#pragma once

#include <string>
#include <string_view>

namespace rldk {

std::string format_double(double value);
void append_double(std::string& out, double value);
// Appends `text` as a quoted JSON string (control characters and invalid UTF-8 bytes escaped).
void append_json_string(std::string& out, std::string_view text);

}  // namespace rldk
