// Report builders for the foundation commands. Machine output is JSON with a versioned schema (docs/schemas/);
// human output is plain text for a terminal.
#pragma once

#include <string>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/json.h"
#include "rldk/summary.h"

namespace rldk {

inline constexpr const char* INFO_SCHEMA = "rldk.info/v1";

Json diagnostics_json(const Diagnostics& diagnostics);
// The rldk.info/v1 document, laid out as Json::dump(2) would; `errors` lists the sources that could not be read.
std::string info_json_text(const std::vector<RunSummary>& runs, const Json& errors);
std::string info_text(const std::vector<RunSummary>& runs);

// The schema of a report rldk saved ("rldk.diff/v1", ...) when `path` is one (a .json file whose "schema" starts
// with "rldk."); empty for anything else.
std::string saved_report_schema(const std::string& path);

}  // namespace rldk
