// Evaluates a parsed expression against a context. Semantics (broadcasting, NaN, missing) are those of
// docs/rule-language.md; the definitions of the window statistics are in window_stats.h.
#pragma once

#include "rldk/expression.h"
#include "rules/ast.h"
#include "rules/operand.h"

namespace rldk::rules {

Operand evaluate_program(const Program& program, const EvalContext& context);

// Programs the monitor computes in doubles, without operands:
//   element: a numeric function of one window element alone (`value > 0.35`, `not isfinite(value)`): it reads
//            `value` and no step, time, name, tag, meta, other metric, string or missing, and calls no window
//            function; its result for a window is that function of each element (one scalar if it reads no `value`).
//   window:  the same, except that `value` appears only as the argument of window functions (`mean(value) < 0.1`,
//            `max(value) - min(value) > 0.3`): one scalar for the whole window.
//   none:    anything else (the general evaluator).
enum class ScalarShape : uint8_t { none, element, window };
ScalarShape scalar_shape(const Program& program);
// The program's value (booleans as 0 and 1) for one element (element shape) or for a window (window shape; `element`
// unused). Only for a program of that shape; the window must not be empty.
double evaluate_scalar(const Program& program, double element, std::span<const double> window,
                       std::span<const int64_t> steps);

}  // namespace rldk::rules
