// Recursive-descent parser for rule expressions (grammar in docs/rule-language.md). Besides syntax it checks what
// can be known before any data arrives: names and functions exist, calls have the right number of arguments,
// metric() names a literal string, strings are not used in arithmetic.
#pragma once

#include <string_view>

#include "rldk/result.h"
#include "rules/ast.h"

namespace rldk::rules {

// Nesting bound for parentheses, operators and chains alike. Real guards nest a handful of levels; the bound keeps
// parsing, evaluation and printing (all recursive) far from the stack limit on hostile input.
inline constexpr uint32_t MAX_NESTING = 100;

Result<Program> parse_program(std::string_view text);

}  // namespace rldk::rules
