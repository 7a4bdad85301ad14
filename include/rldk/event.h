// One observation of one metric: what trainers emit and what EventWriter writes.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace rldk {

inline constexpr double NO_TIME = std::numeric_limits<double>::quiet_NaN();

struct Event {
  int64_t step = 0;
  std::string name;
  double value = 0.0;           // may be NaN or +-Inf: those are observations too, never dropped
  double wall_time = NO_TIME;   // seconds since the Unix epoch; NaN when the source has no time
  std::string run_id;
  std::map<std::string, std::string> tags;
  std::map<std::string, std::string> meta;
};

}  // namespace rldk
