// Evaluates a parsed expression against a context. Semantics (broadcasting, NaN, missing) are those of
// docs/rule-language.md; the definitions of the window statistics are in window_stats.h.
#pragma once

#include "rldk/expression.h"
#include "rules/ast.h"
#include "rules/operand.h"

namespace rldk::rules {

Operand evaluate_program(const Program& program, const EvalContext& context);

// True when the program is a numeric function of one window element alone: it reads `value` (no step, time, names,
// tags, meta, other metrics, strings or missing), calls no window function, and its result for a window is that
// function applied to each element (or one scalar, for a program that does not read `value`). The monitor then
// judges it with evaluate_element(), one double per element, instead of building operands.
bool is_element_function(const Program& program);
// The program's result for one element of value `value` (booleans as 0 and 1); only for is_element_function().
double evaluate_element(const Program& program, double value);

}  // namespace rldk::rules
