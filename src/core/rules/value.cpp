// The public Value type and the helpers that turn a result into "fires" / "does not fire".
#include <cmath>
#include <limits>

#include "rldk/expression.h"
#include "rules/operand.h"
#include "rules/printer.h"

namespace rldk {
namespace {

bool truthy(double x) { return x != 0.0 && !std::isnan(x); }

}  // namespace

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::boolean;
  v.scalar_ = b ? 1.0 : 0.0;
  return v;
}

Value Value::number(double x) {
  Value v;
  v.kind_ = Kind::number;
  v.scalar_ = x;
  return v;
}

Value Value::string(std::string text) {
  Value v;
  v.kind_ = Kind::string;
  v.text_ = std::move(text);
  return v;
}

Value Value::booleans(std::vector<double> zeros_and_ones) {
  Value v;
  v.kind_ = Kind::booleans;
  for (double& x : zeros_and_ones) x = truthy(x) ? 1.0 : 0.0;
  v.elements_ = std::move(zeros_and_ones);
  return v;
}

Value Value::numbers(std::vector<double> elements) {
  Value v;
  v.kind_ = Kind::numbers;
  v.elements_ = std::move(elements);
  return v;
}

double Value::as_number() const {
  return kind_ == Kind::boolean || kind_ == Kind::number ? scalar_ : std::numeric_limits<double>::quiet_NaN();
}

size_t Value::size() const {
  if (is_vector()) return elements_.size();
  return is_missing() ? 0 : 1;
}

bool all_true(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::missing: return false;
    case Value::Kind::boolean:
    case Value::Kind::number: return truthy(value.as_number());
    case Value::Kind::string: return !value.as_string().empty();
    case Value::Kind::booleans:
    case Value::Kind::numbers: break;
  }
  auto xs = value.elements();
  if (xs.empty()) return false;
  for (double x : xs) {
    if (!truthy(x)) return false;
  }
  return true;
}

bool truthy_latest(const Value& value) {
  if (!value.is_vector()) return all_true(value);
  auto xs = value.elements();
  return !xs.empty() && truthy(xs.back());
}

std::string to_string(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::missing: return "missing";
    case Value::Kind::boolean: return value.as_number() != 0.0 ? "true" : "false";
    case Value::Kind::number: return rules::format_number(value.as_number());
    case Value::Kind::string: return rules::quote_string(value.as_string());
    case Value::Kind::booleans:
    case Value::Kind::numbers: break;
  }
  std::string out = "[";
  for (double x : value.elements()) {
    if (out.size() > 1) out += ", ";
    if (value.kind() == Value::Kind::booleans) {
      out += x != 0.0 ? "true" : "false";
    } else {
      out += rules::format_number(x);
    }
  }
  return out + "]";
}

namespace rules {

Value Operand::to_value() && {
  switch (kind_) {
    case Kind::missing: return {};
    case Kind::boolean: return Value::boolean(scalar_ != 0.0);
    case Kind::number: return Value::number(scalar_);
    case Kind::string: return Value::string(std::string(text_));
    case Kind::booleans:
    case Kind::numbers: break;
  }
  const bool heap = !owned_.empty() && elements_.data() == owned_.data();
  std::vector<double> elements = heap ? std::move(owned_) : std::vector<double>(elements_.begin(), elements_.end());
  return kind_ == Kind::booleans ? Value::booleans(std::move(elements)) : Value::numbers(std::move(elements));
}

}  // namespace rules
}  // namespace rldk
