// The files a monitor session writes, checked against what it reads before any of them is opened: a monitor told
// to read its own alerts.jsonl (or a folder holding its --out) would empty its input or read its own output back.
#pragma once

#include <string>
#include <vector>

#include "rldk/result.h"

namespace rldk::act {

// Error (invalid_argument) naming `option` when an output is, links to, or lies inside an input. Inputs that do not
// exist yet (a followed file may appear later) are compared by their normalised absolute path instead.
Status check_monitor_outputs(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs,
                             const std::string& option);

}  // namespace rldk::act
