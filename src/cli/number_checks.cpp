// The finite-number validators declared in commands.h.
#include <cmath>
#include <cstdlib>

#include "commands.h"

namespace rldk::cli {
namespace {

CLI::Validator finite_check(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "'" + text + "' is not a number";
        if (!std::isfinite(v)) return "'" + text + "' is not a finite number";
        if (allow_zero ? v < 0 : v <= 0) return "'" + text + "' must be " + (allow_zero ? "0 or more" : "above 0");
        return "";
      },
      allow_zero ? "NUMBER >= 0" : "NUMBER > 0");
}

}  // namespace

const CLI::Validator& FiniteNonNegative() {
  static const CLI::Validator check = finite_check(true);
  return check;
}

const CLI::Validator& FinitePositive() {
  static const CLI::Validator check = finite_check(false);
  return check;
}

}  // namespace rldk::cli
