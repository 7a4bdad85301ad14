// The canonical text of a parsed expression (Expression::to_string, `rules explain`), and the number and string
// spellings it shares with to_string(Value).
#pragma once

#include <string>
#include <string_view>

#include "rules/ast.h"

namespace rldk::rules {

std::string print_program(const Program& program);

// Shortest text that reads back as the same double: "0.35", "1e-05", "nan", "inf", "-inf".
std::string format_number(double x);

// A double-quoted string literal with \\, \", \n, \t and \r escaped, readable by the lexer.
std::string quote_string(std::string_view text);

}  // namespace rldk::rules
