// The comparison of `rldk bisect --cmp`: parsed into an operator and a number. A string from the command line is
// never handed to an evaluator, so "--cmp '> 0.8; rm -rf ~'" is a usage error, not a command.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rldk/bisect.h"

namespace rldk {
namespace {

struct OpSpelling {
  const char* text;
  CompareOp op;
};
// Two-character operators first, so ">=" is not read as ">" followed by "=0.5".
constexpr OpSpelling OPS[] = {{">=", CompareOp::greater_equal}, {"<=", CompareOp::less_equal},
                              {"==", CompareOp::equal},         {"!=", CompareOp::not_equal},
                              {">", CompareOp::greater},        {"<", CompareOp::less}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool Comparison::holds(double value) const {
  if (std::isnan(value)) return false;
  switch (op) {
    case CompareOp::greater: return value > threshold;
    case CompareOp::greater_equal: return value >= threshold;
    case CompareOp::less: return value < threshold;
    case CompareOp::less_equal: return value <= threshold;
    case CompareOp::equal: return value == threshold;
    case CompareOp::not_equal: return value != threshold;
  }
  return false;
}

std::string Comparison::describe() const {
  for (const auto& o : OPS) {
    if (o.op == op) {
      char number[32];
      std::snprintf(number, sizeof number, "%.17g", threshold);
      // Shortest text that reads back as the same double, so logs show "0.87", not "0.86999999999999999556".
      for (int precision = 1; precision <= 17; ++precision) {
        char shorter[32];
        std::snprintf(shorter, sizeof shorter, "%.*g", precision, threshold);
        if (std::strtod(shorter, nullptr) == threshold) {
          std::snprintf(number, sizeof number, "%s", shorter);
          break;
        }
      }
      return std::string(o.text) + " " + number;
    }
  }
  return "?";
}

Result<Comparison> parse_comparison(std::string_view text) {
  std::string_view s = trim(text);
  const char* usage = "expected an operator (> >= < <= == !=) and a number, e.g. \"> 0.87\"";
  for (const auto& o : OPS) {
    std::string_view spelling(o.text);
    if (s.substr(0, spelling.size()) != spelling) continue;
    std::string number(trim(s.substr(spelling.size())));
    if (number.empty()) return Error{ErrorCode::invalid_argument, "no number after the operator; " + std::string(usage), std::string(text)};
    errno = 0;
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || errno == ERANGE || !std::isfinite(value)) {
      return Error{ErrorCode::invalid_argument, "'" + number + "' is not a finite number; " + usage,
                   std::string(text)};
    }
    return Comparison{o.op, value};
  }
  return Error{ErrorCode::invalid_argument, usage, std::string(text)};
}

}  // namespace rldk
