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
Json info_json(const std::vector<RunSummary>& runs);
std::string info_text(const std::vector<RunSummary>& runs);

}  // namespace rldk
