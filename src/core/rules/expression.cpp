// The public face of rule expressions: parse, evaluate, describe.
#include <cmath>

#include "rldk/expression.h"

#include "rules/ast.h"
#include "rules/evaluator.h"
#include "rules/parser.h"
#include "rules/printer.h"

namespace rldk {

Result<Expression> Expression::parse(std::string_view text) {
  auto program = rules::parse_program(text);
  if (!program) return program.error();
  rules::Program parsed = std::move(program.value());
  parsed.scalar_shape = static_cast<uint8_t>(rules::scalar_shape(parsed));
  return Expression(std::make_shared<const rules::Program>(std::move(parsed)));
}

Value Expression::evaluate(const EvalContext& context) const {
  return rules::evaluate_program(*program_, context).to_value();
}

std::optional<bool> Expression::holds(const EvalContext& context) const {
  // Programs computed in doubles (rules/evaluator.h); an empty window goes the general way (its `value` is missing).
  const auto shape = static_cast<rules::ScalarShape>(program_->scalar_shape);
  auto values = context.window_values();
  if (shape != rules::ScalarShape::none && !values.empty()) {
    auto truthy = [](double x) { return x != 0.0 && !std::isnan(x); };
    if (shape == rules::ScalarShape::window) {
      return truthy(rules::evaluate_scalar(*program_, 0.0, values, context.window_steps()));
    }
    // A function of each element holds when it holds for every element of the window (it is never missing).
    for (double v : values) {
      if (!truthy(rules::evaluate_scalar(*program_, v, {}, {}))) return false;
    }
    return true;
  }
  rules::Operand result = rules::evaluate_program(*program_, context);
  switch (result.kind()) {
    case Value::Kind::missing: return std::nullopt;
    case Value::Kind::string: return !result.text().empty();
    case Value::Kind::boolean:
    case Value::Kind::number: return result.scalar() != 0.0 && !std::isnan(result.scalar());
    case Value::Kind::booleans:
    case Value::Kind::numbers: break;
  }
  auto xs = result.elements();
  if (xs.empty()) return false;  // as all_true: an empty window holds nothing
  for (double x : xs) {
    if (x == 0.0 || std::isnan(x)) return false;
  }
  return true;
}

bool Expression::uses_window_function() const { return program_->uses_window_function; }

std::vector<std::string> Expression::metrics_referenced() const { return program_->metrics; }

std::string Expression::to_string() const { return rules::print_program(*program_); }

}  // namespace rldk
