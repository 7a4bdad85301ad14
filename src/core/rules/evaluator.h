// Evaluates a parsed expression against a context. Semantics (broadcasting, NaN, missing) are those of
// docs/rule-language.md; the definitions of the window statistics are in window_stats.h.
#pragma once

#include "rldk/expression.h"
#include "rules/ast.h"
#include "rules/operand.h"

namespace rldk::rules {

Operand evaluate_program(const Program& program, const EvalContext& context);

}  // namespace rldk::rules
