// The functions a rule expression may call: one table that the parser (names, arity, error messages), the printer
// and docs/rule-language.md agree on.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace rldk::rules {

enum class Function : uint8_t {
  // Window functions: aggregate a whole window into one number or boolean.
  count,
  mean,
  median,
  min,
  max,
  sum,
  stddev,
  variance,
  any,
  all,
  first,
  last,
  delta,
  slope,
  ewma,
  zscore,
  robust_z,
  pct_change,
  // Element-wise functions: one result per element.
  abs,
  sqrt,
  log,
  isnan,
  isfinite,
  // Other.
  has,     // not missing
  metric,  // another metric at the same step
};

struct FunctionInfo {
  std::string_view name;
  Function function;
  uint8_t min_args;
  uint8_t max_args;
  bool window;               // aggregates the window (Expression::uses_window_function)
  std::string_view params;   // for arity messages, e.g. "x, alpha"
};

// Every function, sorted by name.
std::span<const FunctionInfo> all_functions();
const FunctionInfo* find_function(std::string_view name);
const FunctionInfo& function_info(Function function);
// "abs, all, any, ..." for the message about an unknown function.
std::string known_function_names();

}  // namespace rldk::rules
