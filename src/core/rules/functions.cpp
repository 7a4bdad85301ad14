#include "rules/functions.h"

#include <algorithm>
#include <array>

namespace rldk::rules {
namespace {

// Sorted by name so that the list in error messages reads alphabetically.
constexpr std::array FUNCTIONS = {
    FunctionInfo{"abs", Function::abs, 1, 1, false, "x"},
    FunctionInfo{"all", Function::all, 1, 1, true, "predicate"},
    FunctionInfo{"any", Function::any, 1, 1, true, "predicate"},
    FunctionInfo{"count", Function::count, 0, 1, true, "[predicate]"},
    FunctionInfo{"delta", Function::delta, 1, 1, true, "x"},
    FunctionInfo{"ewma", Function::ewma, 2, 2, true, "x, alpha"},
    FunctionInfo{"first", Function::first, 1, 1, true, "x"},
    FunctionInfo{"has", Function::has, 1, 1, false, "x"},
    FunctionInfo{"isfinite", Function::isfinite, 1, 1, false, "x"},
    FunctionInfo{"isnan", Function::isnan, 1, 1, false, "x"},
    FunctionInfo{"last", Function::last, 1, 1, true, "x"},
    FunctionInfo{"log", Function::log, 1, 1, false, "x"},
    FunctionInfo{"max", Function::max, 1, 1, true, "x"},
    FunctionInfo{"mean", Function::mean, 1, 1, true, "x"},
    FunctionInfo{"median", Function::median, 1, 1, true, "x"},
    FunctionInfo{"metric", Function::metric, 1, 1, false, "\"name\""},
    FunctionInfo{"min", Function::min, 1, 1, true, "x"},
    FunctionInfo{"pct_change", Function::pct_change, 1, 1, true, "x"},
    FunctionInfo{"robust_z", Function::robust_z, 1, 1, true, "x"},
    FunctionInfo{"slope", Function::slope, 1, 1, true, "x"},
    FunctionInfo{"sqrt", Function::sqrt, 1, 1, false, "x"},
    FunctionInfo{"std", Function::stddev, 1, 1, true, "x"},
    FunctionInfo{"sum", Function::sum, 1, 1, true, "x"},
    FunctionInfo{"var", Function::variance, 1, 1, true, "x"},
    FunctionInfo{"zscore", Function::zscore, 1, 1, true, "x"},
};

}  // namespace

std::span<const FunctionInfo> all_functions() { return FUNCTIONS; }

const FunctionInfo* find_function(std::string_view name) {
  auto it = std::lower_bound(FUNCTIONS.begin(), FUNCTIONS.end(), name,
                             [](const FunctionInfo& f, std::string_view n) { return f.name < n; });
  return it != FUNCTIONS.end() && it->name == name ? &*it : nullptr;
}

const FunctionInfo& function_info(Function function) {
  for (const auto& f : FUNCTIONS) {
    if (f.function == function) return f;
  }
  return FUNCTIONS.front();  // unreachable: every enumerator is in the table (checked by the unit tests)
}

std::string known_function_names() {
  std::string out;
  for (const auto& f : FUNCTIONS) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

}  // namespace rldk::rules
