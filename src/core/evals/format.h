// Number formatting shared by the eval card's Markdown, HTML and messages (JSON keeps full precision).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace rldk::evals {

inline std::string fmt_number(double v, int digits = 4) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

inline std::string fmt_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", fraction * 100);
  return buf;
}

}  // namespace rldk::evals
