// Rule expressions: the small language of live-monitor guards, e.g. `value > 0.35`, `mean(value) < 0.1`,
// `metric("policy/grad_norm") / metric("value/grad_norm") > 4.5`. A rule's text is parsed once into an immutable
// Expression and evaluated for every event against an EvalContext that the rule engine provides (the window of
// recent values of the watched metric, the event's name, tags and meta, other metrics at the same step).
//
// The language itself (grammar, every function, NaN and missing semantics) is documented in docs/rule-language.md.
// No user code is ever executed: the text is tokenized and parsed by hand, and only the operators and functions of
// that document exist.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/result.h"

namespace rldk {

// What an expression evaluates to. `value` and `step` denote the whole window, so an element-wise expression such as
// `value > 0.35` yields one boolean per window element (oldest first); aggregations such as `mean(value)` yield a
// scalar. How a result decides whether a rule fires is the engine's choice: all_true() ("every element holds", the
// consecutive kind) or truthy_latest() ("the latest element holds", the rolling kind).
class Value {
 public:
  enum class Kind : uint8_t {
    missing,   // a metric, tag or meta key that is not there (and anything computed from one)
    boolean,
    number,
    string,
    booleans,  // one per window element, oldest first
    numbers,   // one per window element, oldest first
  };

  Value() = default;  // missing
  static Value boolean(bool b);
  static Value number(double x);
  static Value string(std::string text);
  static Value booleans(std::vector<double> zeros_and_ones);
  static Value numbers(std::vector<double> elements);

  Kind kind() const { return kind_; }
  bool is_missing() const { return kind_ == Kind::missing; }
  bool is_vector() const { return kind_ == Kind::booleans || kind_ == Kind::numbers; }
  // A boolean or number scalar as a number (true = 1); NaN for anything else.
  double as_number() const;
  // The text of a string scalar; empty for anything else.
  const std::string& as_string() const { return text_; }
  // The elements of a vector (booleans as 0 and 1); empty for scalars.
  std::span<const double> elements() const { return elements_; }
  // Elements of a vector, 1 for a scalar, 0 for missing.
  size_t size() const;

 private:
  Kind kind_ = Kind::missing;
  double scalar_ = 0.0;
  std::string text_;
  std::vector<double> elements_;
};

// Truthiness, shared by the language and these helpers: a number is true when it is neither 0 nor NaN, a string when
// it is not empty, missing is false.
//
// True when the result is a non-empty vector whose elements are all true, or a true scalar.
bool all_true(const Value& value);
// True when the last element of a vector is true, or the scalar is true.
bool truthy_latest(const Value& value);
// A compact rendering for messages and tests: `true`, `0.5`, `"kl"`, `missing`, `[true, false]`, `[0.1, nan]`.
std::string to_string(const Value& value);

// What an expression can see; the rule engine implements it. Views returned here must stay valid until evaluate()
// returns.
struct EvalContext {
  virtual ~EvalContext() = default;
  // The rule's window of the watched metric, oldest first; the latest is back(). Both spans should have the same
  // length (if not, steps are aligned on the latest value, or missing when there are fewer steps than values).
  virtual std::span<const double> window_values() const = 0;
  virtual std::span<const int64_t> window_steps() const = 0;
  virtual double time() const = 0;  // seconds since the Unix epoch of the latest event; NaN if unknown
  virtual std::string_view name() const = 0;  // canonical metric name of the latest event
  virtual std::string_view run_id() const = 0;
  virtual std::optional<std::string_view> tag(std::string_view key) const = 0;
  virtual std::optional<std::string_view> meta(std::string_view key) const = 0;
  // The value of any metric at the latest event's step; nullopt when it was not logged there.
  virtual std::optional<double> metric(std::string_view name) const = 0;
};

namespace rules {
struct Program;  // the parsed form (src/core/rules/ast.h)
}

// A parsed rule expression. Immutable: copies share the parsed form, and evaluate() may be called from several
// threads at once.
class Expression {
 public:
  // Parses `text`. Errors have code invalid_argument, context "column N" (1-based, counted in characters; "line L,
  // column N" for text with several lines) and a message saying what was expected and what was found.
  static Result<Expression> parse(std::string_view text);

  // Never throws. Costs O(window) per call; scalar results such as `mean(value) > 0.6` allocate nothing unless a
  // string result is long.
  Value evaluate(const EvalContext& context) const;
  // How a rule reads the result, without building a Value (the monitor's hot path): nullopt when it is missing,
  // else all_true(evaluate(context)).
  std::optional<bool> holds(const EvalContext& context) const;

  // Whether the expression calls a function that aggregates the window (mean, count, slope, ...).
  bool uses_window_function() const;
  // The names passed to metric("..."), sorted, without duplicates.
  std::vector<std::string> metrics_referenced() const;
  // The canonical form (for `rules explain`): one space around binary operators, `and`/`or`/`not`, strings in double
  // quotes, no redundant parentheses. Parsing it again gives the same expression and the same text.
  std::string to_string() const;

 private:
  explicit Expression(std::shared_ptr<const rules::Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const rules::Program> program_;
};

}  // namespace rldk
