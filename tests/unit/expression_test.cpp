// Rule expressions: parsing, canonical printing, evaluation semantics (broadcasting, NaN, missing), every window
// function with exact numbers, parse errors with their columns, and the oracles of the older Python monitor.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rldk/expression.h"
#include "rules/functions.h"
#include "test_support.h"

namespace {

using rldk::Expression;
using rldk::Value;
using rldk_test::INF;
using rldk_test::NaN;

// A rule engine's view of one event, fixed in advance.
struct FakeContext : rldk::EvalContext {
  std::vector<double> values;
  std::vector<int64_t> steps;
  double event_time = 1700000000.5;
  std::string metric_name = "policy/kl";
  std::string run = "run-1";
  std::map<std::string, std::string, std::less<>> tags = {{"phase", "train"}, {"seed", "42"}, {"my-key", "v"}};
  std::map<std::string, std::string, std::less<>> metas = {{"threshold", "0.5"}, {"word", "abc"}, {"empty", ""}};
  std::map<std::string, double, std::less<>> metrics = {
      {"policy/grad_norm", 10.0}, {"value/grad_norm", 2.0}, {"alpha", 2.0}, {"nan_metric", NaN}};

  std::span<const double> window_values() const override { return values; }
  std::span<const int64_t> window_steps() const override { return steps; }
  double time() const override { return event_time; }
  std::string_view name() const override { return metric_name; }
  std::string_view run_id() const override { return run; }
  std::optional<std::string_view> tag(std::string_view key) const override { return find(tags, key); }
  std::optional<std::string_view> meta(std::string_view key) const override { return find(metas, key); }
  std::optional<double> metric(std::string_view key) const override {
    auto it = metrics.find(key);
    if (it == metrics.end()) return std::nullopt;
    return it->second;
  }

  static std::optional<std::string_view> find(const std::map<std::string, std::string, std::less<>>& m,
                                              std::string_view key) {
    auto it = m.find(key);
    if (it == m.end()) return std::nullopt;
    return std::string_view(it->second);
  }
};

// A context whose window holds `values` at steps 1, 2, ...
FakeContext window_of(std::vector<double> values) {
  FakeContext c;
  c.values = std::move(values);
  for (size_t i = 0; i < c.values.size(); ++i) c.steps.push_back(static_cast<int64_t>(i + 1));
  return c;
}

Expression parse_ok(const std::string& text) {
  auto parsed = Expression::parse(text);
  if (!parsed) {
    ADD_FAILURE() << "'" << text << "' did not parse: " << rldk::to_string(parsed.error());
    return Expression::parse("null").value();
  }
  return std::move(parsed).value();
}

std::string eval_text(const std::string& text, const FakeContext& context) {
  return rldk::to_string(parse_ok(text).evaluate(context));
}

// --- evaluation tables: expression, window (steps 1..n), expected result as to_string(Value) ---

struct EvalCase {
  const char* text;
  std::vector<double> window;
  const char* expected;
};

// holds() is how the monitor reads a condition (with a per-element shortcut for functions of `value` alone): it must
// say exactly what all_true() says of evaluate(), or that the result is missing.
void expect_holds_agrees(const Expression& e, const FakeContext& context, const std::string& text) {
  Value v = e.evaluate(context);
  std::optional<bool> expected = v.is_missing() ? std::nullopt : std::optional<bool>(rldk::all_true(v));
  EXPECT_EQ(e.holds(context), expected) << "expression: " << text << " = " << rldk::to_string(v);
}

void run_cases(const std::vector<EvalCase>& cases) {
  for (const auto& c : cases) {
    EXPECT_EQ(eval_text(c.text, window_of(c.window)), c.expected) << "expression: " << c.text;
    expect_holds_agrees(parse_ok(c.text), window_of(c.window), c.text);
  }
}

TEST(ExprEval, HoldsAgreesWithEvaluateOnEveryWindow) {
  const std::vector<std::string> texts = {
      "value > 0.35", "not isfinite(value)", "abs(value - 0.5) < 0.2", "value > 0.2 if value < 1 else value < 3",
      "value % 2 == 1", "value ** 2 > 0.1", "-value < -0.3", "0 < value <= 1", "value in (0.5, 1, inf)",
      "value not in (0.5)", "1 < value in (2, 3)", "value > 0 and not isnan(value) or value == -1", "sqrt(value) > 0.5",
      "log(value) < 0", "true", "0", "isnan(value) == false", "value != value", "mean(value) > 0.3",
      "value > metric(\"policy/grad_norm\") / 100", "step > 1 and value > 0", "tags.phase == \"train\"",
      "value > meta.threshold", "has(value)", "null", "(value > 0.3) + (value > 0.4) >= 1",
      // Window functions of the window itself (computed as one scalar by holds()).
      "max(value) - min(value) < 0.6", "abs(mean(value)) > 0.1", "count() >= 2 and median(value) > 0",
      "std(value) < 1", "var(value) >= 0", "zscore(value) > 1", "robust_z(value) > 2", "slope(value) > 0",
      "ewma(value, 0.5) > 0.4", "first(value) < last(value)", "pct_change(value) > 0.1", "delta(value) != 0",
      "count(value) == 2", "any(value)", "all(value)", "sum(value) > 1 if count() > 2 else mean(value) in (0.5, 1)",
      "mean(value) > metric(\"policy/grad_norm\")", "mean(abs(value)) > 0.1", "slope(value) * 1000 > -1"};
  const std::vector<std::vector<double>> windows = {
      {}, {0.5}, {NaN}, {0.3, 0.45, NaN, 0.5, 1e300, -0.0, INF, 0.4}, {2, 3, 1, 0.5}, {-1, -INF, 0, 1}};
  for (const auto& text : texts) {
    Expression e = parse_ok(text);
    for (const auto& w : windows) expect_holds_agrees(e, window_of(w), text);
  }
}

TEST(ExprEval, ArithmeticAndPrecedence) {
  run_cases({
      {"1 + 2 * 3", {}, "7"},
      {"(1 + 2) * 3", {}, "9"},
      {"10 - 4 - 3", {}, "3"},
      {"100 / 10 / 5", {}, "2"},
      {"2 ** 3 ** 2", {}, "512"},  // right-associative
      {"-2 ** 2", {}, "-4"},       // ** binds tighter than unary minus, as in Python
      {"(-2) ** 2", {}, "4"},
      {"2 ** -1", {}, "0.5"},
      {"- -3", {}, "3"},
      {"7 % 3", {}, "1"},
      {"-7 % 3", {}, "2"},  // Python's modulo: the sign of the divisor
      {"7 % -3", {}, "-2"},
      {"7 % 0", {}, "nan"},
      {"1 / 0", {}, "inf"},
      {"-1 / 0", {}, "-inf"},
      {"0 / 0", {}, "nan"},
      {"true + true", {}, "2"},
      {"1 + 2 if false else 5", {}, "5"},  // the conditional binds loosest
      {"1 if true else 2 if true else 3", {}, "1"},
      {"1 if false else 2 if true else 3", {}, "2"},
      {"not 1 < 0", {}, "true"},         // not binds looser than comparisons
      {"not true and false", {}, "false"},
      {"true or false and false", {}, "true"},  // and binds tighter than or
      {"false and true or true", {}, "true"},
      {"!false && !(1 > 2) || false", {}, "true"},
      {"1e-3 * 1000", {}, "1"},
      {".5 + 1.", {}, "1.5"},
      {"nan", {}, "nan"},
      {"inf > 1e308", {}, "true"},
      {"-inf < -1e308", {}, "true"},
      {"None", {}, "missing"},
      {"3 > 2 == true", {}, "false"},  // chained: (3 > 2) and (2 == true)
  });
}

TEST(ExprEval, ChainedComparisons) {
  run_cases({
      {"1 < 2 < 3", {}, "true"},
      {"1 < 3 < 2", {}, "false"},
      {"3 > 2 > 2", {}, "false"},
      {"3 > 2 >= 2", {}, "true"},
      {"1 == 1.0 != 2", {}, "true"},
      {"0.1 < value < 0.5", {0.05, 0.2, 0.6, 0.5, 0.1}, "[false, true, false, false, false]"},
      {"0.1 <= value <= 0.5", {0.05, 0.2, 0.6, 0.5, 0.1}, "[false, true, false, true, true]"},
      {"0 < value < metric(\"policy/grad_norm\") < 20", {5, 15}, "[true, false]"},
  });
}

TEST(ExprEval, InAndNotIn) {
  run_cases({
      {"name in (\"kl\", \"policy/kl\")", {}, "true"},
      {"name in ['kl', 'kl_mean']", {}, "false"},
      {"name not in ('kl', 'kl_mean')", {}, "true"},
      {"name not in ('policy/kl',)", {}, "false"},
      {"value in (1, 2)", {1, 3, 2}, "[true, false, true]"},
      {"value not in (1, 2)", {1, 3, 2}, "[false, true, false]"},
      {"tags.phase in ('train', 'eval')", {}, "true"},
      {"tags.seed in (41, 42)", {}, "true"},  // "42" compares as a number
      {"tags.absent in ('a', 'b')", {}, "false"},
      {"tags.absent not in ('a', 'b')", {}, "false"},  // a comparison with missing is false
      {"1 in ()", {}, "false"},
      {"1 not in ()", {}, "true"},
      {"nan in (nan, 1)", {}, "false"},  // IEEE: NaN equals nothing
      {"nan not in (1, 2)", {}, "true"},
      {"step in (2, 3)", {5, 5, 5}, "[false, true, true]"},
      {"(1 in (1, 2)) == true", {}, "true"},
  });
}

TEST(ExprEval, StringsTagsMeta) {
  run_cases({
      {"name == 'policy/kl'", {}, "true"},
      {"name == \"policy/kl\"", {}, "true"},
      {"run_id == 'run-1'", {}, "true"},
      {"run_id != 'run-2'", {}, "true"},
      {"tags.phase == 'train'", {}, "true"},
      {"tags['phase'] == 'train'", {}, "true"},
      {"tags[\"my-key\"] == \"v\"", {}, "true"},
      {"tags.phase < 'u'", {}, "true"},  // strings order by bytes
      {"tags.phase == 1", {}, "false"},  // not a number: simply unequal
      {"tags.phase != 1", {}, "true"},
      {"tags.phase > 1", {}, "false"},
      {"tags.seed == 42", {}, "true"},
      {"tags.seed == '42'", {}, "true"},
      {"tags.seed + 1", {}, "43"},
      {"tags.phase + 1", {}, "missing"},  // arithmetic on a string that is not a number
      {"tags.phase", {}, "\"train\""},
      {"meta.threshold", {}, "\"0.5\""},
      {"value > meta.threshold", {0.4, 0.6}, "[false, true]"},
      {"meta[\"threshold\"] * 2", {}, "1"},
      {"meta.word == 'abc'", {}, "true"},
      {"has(tags.phase)", {}, "true"},
      {"has(tags.nope)", {}, "false"},
      {"has(meta.empty)", {}, "true"},
      {"not meta.empty", {}, "true"},  // the empty string is false
      {"tags.nope == 'x'", {}, "false"},
      {"tags.nope != 'x'", {}, "false"},
      {"'a' == 'a' and 'b' != 'a'", {}, "true"},
      {"'it\\'s' == \"it's\"", {}, "true"},
      {"time > 1700000000", {}, "true"},
      {"time", {}, "1700000000.5"},
  });
}

TEST(ExprEval, WindowVectorsAndBroadcasting) {
  run_cases({
      {"value", {0.1, 0.2}, "[0.1, 0.2]"},
      {"value > 0.35", {0.3, 0.4, 0.5}, "[false, true, true]"},
      {"value * 2 + 1", {1, 2}, "[3, 5]"},
      {"-value", {1, -2}, "[-1, 2]"},
      {"value - mean(value)", {1, 2, 3}, "[-1, 0, 1]"},
      {"value > 1 and value < 3", {1, 2, 3}, "[false, true, false]"},
      {"value > 2 or true", {1, 3}, "[true, true]"},  // no short-circuit: shapes stay element-wise
      {"not value > 1", {1, 2}, "[true, false]"},
      {"step", {9, 9, 9}, "[1, 2, 3]"},
      {"step > 2", {9, 9, 9, 9}, "[false, false, true, true]"},
      {"value if value > 2 else 0", {1, 3, 5}, "[0, 3, 5]"},
      {"1 if value > 2 else 0", {1, 3, 5}, "[0, 1, 1]"},
      {"true if value > 2 else false", {1, 3}, "[false, true]"},
      {"value if value > 2 else null", {1, 3}, "missing"},
      {"value > metric(\"policy/grad_norm\")", {1, 11}, "[false, true]"},
      {"abs(value)", {-1, 2}, "[1, 2]"},
      {"sqrt(value)", {4, -1}, "[2, nan]"},
      {"log(value)", {1, 0}, "[0, -inf]"},
      {"isnan(value)", {1, NaN}, "[false, true]"},
      {"isfinite(value)", {1, NaN, INF}, "[true, false, false]"},
      {"value > 0.5", {}, "false"},  // empty window: value is missing
      {"value", {}, "missing"},
  });
}

TEST(ExprEval, WindowFunctionsExact) {
  const std::vector<double> w = {1, 2, 3, 4, 10};
  run_cases({
      {"mean(value)", w, "4"},
      {"median(value)", w, "3"},
      {"median(value)", {4, 1, 3, 2}, "2.5"},
      {"min(value)", w, "1"},
      {"max(value)", w, "10"},
      {"sum(value)", w, "20"},
      {"var(value)", w, "10"},  // population: (9 + 4 + 1 + 0 + 36) / 5
      {"std(value)", w, "3.1622776601683795"},
      {"count()", w, "5"},
      {"count(value > 2)", w, "3"},
      {"count(value)", {0, 1, 2}, "2"},
      {"any(value > 9)", w, "true"},
      {"any(value > 10)", w, "false"},
      {"all(value > 0)", w, "true"},
      {"all(value > 1)", w, "false"},
      {"first(value)", w, "1"},
      {"last(value)", w, "10"},
      {"delta(value)", w, "9"},
      {"slope(value)", {1, 5, 2}, "0.5"},  // numpy.polyfit([1, 2, 3], [1, 5, 2], 1)[0]
      {"slope(value)", {2, 4, 6, 8}, "2"},
      {"slope(step)", w, "1"},
      {"ewma(value, 0.5)", w, "6.5625"},  // 1, 1.5, 2.25, 3.125, 6.5625
      {"ewma(value, 1)", w, "10"},
      {"zscore(value)", w, "1.8973665961010275"},   // (10 - 4) / sqrt(10)
      {"robust_z(value)", w, "4.721435316336167"},  // (10 - 3) / (1.4826 * MAD 1)
      {"pct_change(value)", w, "9"},
      {"pct_change(value)", {-2, -1}, "0.5"},  // relative to |first|
      {"pct_change(value)", {0, 1}, "nan"},    // no relative change from zero
      {"mean(value > 2)", w, "0.6"},           // booleans count as 0 and 1
      {"sum(value > 2)", w, "3"},
      {"mean(value - mean(value))", w, "0"},
      {"max(value) - min(value) < 0.05", {0.50, 0.52, 0.53}, "true"},
      {"mean(value) < 0.1", {0.05, 0.08, 0.12}, "true"},
      {"median(step)", w, "3"},
      {"count(value > 2) / count()", w, "0.6"},
      {"zscore(value)", {3, 3, 3}, "0"},     // no spread: the latest equals the mean
      {"robust_z(value)", {3, 3, 3}, "0"},
      {"robust_z(value)", {3, 3, 3, 4}, "333333333.3333333"},  // MAD 0: scale 1e-9 * max(1, |median| = 3)
      {"robust_z(value)", {0.5, 0.5, 0.5, 0.6}, "99999999.99999997"},  // (0.6 - 0.5) / 1e-9 in doubles; max(1, 0.5) = 1
      {"slope(value)", {7}, "nan"},           // fewer than two points
      {"ewma(value, metric(\"alpha\"))", w, "nan"},  // alpha outside (0, 1] at run time
      {"ewma(value, value / 20)", w, "6.5625"},      // a window alpha means its latest element
      {"mean(3)", w, "3"},                           // a scalar is a window of one
      {"count(true)", w, "1"},
      {"mean(value)", {}, "missing"},
      {"count()", {}, "0"},
  });
}

TEST(ExprEval, SlopeUsesSteps) {
  FakeContext c = window_of({1, 2, 3, 4, 10});
  c.steps = {10, 20, 30, 40, 50};
  EXPECT_EQ(eval_text("slope(value)", c), "0.2");  // numpy.polyfit([10..50], [1, 2, 3, 4, 10], 1)[0]
  c.values = {1, NaN, 3, 4, 10};  // the NaN pair is skipped: fit of (10,1) (30,3) (40,4) (50,10)
  EXPECT_EQ(eval_text("slope(value)", c), eval_text("slope(value)", [] {
              FakeContext d = window_of({1, 3, 4, 10});
              d.steps = {10, 30, 40, 50};
              return d;
            }()));
  c.steps = {5, 5, 5, 5, 5};
  EXPECT_EQ(eval_text("slope(value)", c), "nan");  // all at one step
}

TEST(ExprEval, ContextWithoutSteps) {
  FakeContext c = window_of({1, 2, 3});
  c.steps.clear();  // a context that does not know the steps: values still work, steps are missing
  EXPECT_EQ(eval_text("value > 1", c), "[false, true, true]");
  EXPECT_EQ(eval_text("mean(value)", c), "2");
  EXPECT_EQ(eval_text("step", c), "missing");
  EXPECT_EQ(eval_text("slope(value)", c), "nan");
  c.steps = {7, 8, 9, 10};  // one too many: aligned on the latest
  EXPECT_EQ(eval_text("step", c), "[8, 9, 10]");
}

TEST(ExprEval, NanSemantics) {
  const std::vector<double> w = {1, NaN, 3, INF, 5};
  run_cases({
      {"mean(value)", w, "3"},  // non-finite elements are skipped by aggregations
      {"median(value)", w, "3"},
      {"min(value)", w, "1"},
      {"max(value)", w, "5"},
      {"sum(value)", w, "9"},
      {"std(value)", w, "1.632993161855452"},
      {"first(value)", {NaN, 2, 3, NaN}, "2"},
      {"last(value)", {NaN, 2, 3, NaN}, "3"},
      {"delta(value)", {NaN, 2, 3, NaN}, "1"},
      {"ewma(value, 0.5)", {NaN, 2, NaN, 4}, "3"},
      {"count()", w, "5"},  // count() is the window length
      {"count(isnan(value))", w, "1"},
      {"count(value > 0)", w, "4"},  // the predicate sees every element: NaN > 0 is false, inf > 0 true
      {"count(value)", w, "4"},      // NaN is false
      {"any(isnan(value))", w, "true"},
      {"all(isfinite(value))", w, "false"},
      {"value > 0", w, "[true, false, true, true, true]"},
      {"value != value", w, "[false, true, false, false, false]"},
      {"zscore(value)", {1, 2, NaN}, "nan"},  // the latest is the subject
      {"robust_z(value)", {1, 2, INF}, "nan"},
      {"zscore(value)", {1, NaN, 2, 3}, "1.224744871391589"},  // (3 - 2) / sqrt(2/3)
      {"mean(value)", {NaN, NaN}, "nan"},  // nothing finite: NaN, which no comparison accepts
      {"sum(value)", {NaN, INF}, "nan"},
      {"max(value)", {NaN, -INF}, "nan"},
      {"mean(value) > 0", {NaN, NaN}, "false"},
      {"mean(value) < 0", {NaN, NaN}, "false"},
      {"isnan(mean(value))", {NaN, NaN}, "true"},
      {"nan == nan", {}, "false"},
      {"nan != nan", {}, "true"},  // IEEE
      {"nan < 1 or nan >= 1", {}, "false"},
      {"not nan", {}, "true"},  // NaN is false
      {"metric(\"nan_metric\") > 0", {}, "false"},
      {"isnan(metric(\"nan_metric\"))", {}, "true"},
      {"has(metric(\"nan_metric\"))", {}, "true"},  // NaN is a value, not missing
      {"isnan(value)", {}, "false"},
  });
}

TEST(ExprEval, MissingPropagates) {
  run_cases({
      {"metric(\"absent\")", {}, "missing"},
      {"metric(\"absent\") + 1", {}, "missing"},
      {"-metric(\"absent\")", {}, "missing"},
      {"metric(\"absent\") * value", {1, 2}, "missing"},
      {"metric(\"absent\") > 1", {}, "false"},  // comparisons with missing are false, != included
      {"metric(\"absent\") != 1", {}, "false"},
      {"metric(\"absent\") == metric(\"absent\")", {}, "false"},
      {"not (metric(\"absent\") > 1)", {}, "true"},
      {"metric(\"absent\") or true", {}, "true"},  // missing is false in a boolean context
      {"metric(\"absent\") and true", {}, "false"},
      {"not metric(\"absent\")", {}, "true"},
      {"1 if metric(\"absent\") else 2", {}, "2"},
      {"metric(\"absent\") if true else 2", {}, "missing"},
      {"has(metric(\"absent\"))", {}, "false"},
      {"not has(metric(\"absent\")) or metric(\"absent\") > 3", {}, "true"},
      {"mean(metric(\"absent\"))", {1}, "missing"},
      {"count(metric(\"absent\"))", {1}, "missing"},
      {"abs(metric(\"absent\"))", {}, "missing"},
      {"isnan(metric(\"absent\"))", {}, "false"},
      {"isfinite(metric(\"absent\"))", {}, "false"},
      {"ewma(value, metric(\"absent\"))", {1}, "missing"},
      {"meta.absent + 1", {}, "missing"},
      {"meta.word * 2", {}, "missing"},
      {"value > meta.absent", {1, 2}, "false"},
      {"has(null)", {}, "false"},
      {"metric(\"absent\") in (1, 2)", {}, "false"},
  });
}

TEST(ExprEval, OtherMetrics) {
  run_cases({
      {"metric(\"policy/grad_norm\") / metric(\"value/grad_norm\") > 4.5", {}, "true"},
      {"metric(\"policy/grad_norm\") / metric(\"value/grad_norm\")", {}, "5"},
      {"metric('policy/grad_norm') > 4.5 * metric('value/grad_norm')", {}, "true"},
      {"has(metric(\"value/grad_norm\"))", {}, "true"},
  });
  auto e = parse_ok("metric(\"b\") + metric(\"a\") * metric(\"b\") > 1");
  EXPECT_EQ(e.metrics_referenced(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(parse_ok("value > 1").metrics_referenced().empty());
}

TEST(ExprEval, UsesWindowFunction) {
  struct Case {
    const char* text;
    bool expected;
  };
  for (const Case& c : std::vector<Case>{
           {"value > 0.35", false},
           {"name in ('kl', 'kl_mean')", false},
           {"metric(\"x\") > 1", false},
           {"abs(value) > 1 and isnan(value) == false and has(tags.k)", false},
           {"mean(value) < 0.1", true},
           {"count() > 3", true},
           {"value > 1 if true else slope(value) > 0", true},
           {"1 in (2, max(value))", true},
       }) {
    EXPECT_EQ(parse_ok(c.text).uses_window_function(), c.expected) << c.text;
  }
}

TEST(ExprEval, GuardsFromTheDocs) {
  FakeContext c = window_of({0.36, 0.4, 0.5, 0.45, 0.38});
  c.metas["length_bias_threshold"] = "0.3";
  run_cases({
      {"value > 0.35", {0.36, 0.4, 0.5, 0.45, 0.38}, "[true, true, true, true, true]"},
      {"robust_z(value) > 6", {1, 1.1, 0.9, 1, 9}, "true"},
      {"mean(value) < 0.1", {0.2, 0.1, 0.05}, "false"},
      {"mean(value) < 0.1", {0.05, 0.08, 0.1}, "true"},
      {"max(value) - min(value) < 0.05", {0.31, 0.33, 0.32}, "true"},
      {"slope(value) < 0 and pct_change(value) < -0.2", {1, 0.9, 0.7}, "true"},
      {"metric(\"policy/grad_norm\") / metric(\"value/grad_norm\") > 4.5", {}, "true"},
      {"has(metric(\"value/grad_norm\")) and metric(\"policy/grad_norm\") / metric(\"value/grad_norm\") > 4.5",
       {},
       "true"},
      {"any(isnan(value)) or not all(isfinite(value))", {1, INF}, "true"},
      {"count(value > 0.3) >= 3", {0.4, 0.1, 0.35, 0.5}, "true"},
      {"name in (\"kl\", \"kl_mean\", \"policy/kl\")", {}, "true"},
  });
  EXPECT_EQ(eval_text("value > meta.length_bias_threshold and tags.phase == \"train\"", c),
            "[true, true, true, true, true]");
}

// --- the older tool's monitor oracles: slide a window of `size` over `values`; list the 1-based indexes of the
// values whose window makes the rule fire ---

std::vector<int> firing_ends(const std::string& text, size_t size, const std::vector<double>& values,
                             bool (*decide)(const Value&)) {
  Expression e = parse_ok(text);
  std::vector<int> ends;
  for (size_t end = size; end <= values.size(); ++end) {
    FakeContext c = window_of(std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(end - size),
                                                  values.begin() + static_cast<std::ptrdiff_t>(end)));
    if (decide(e.evaluate(c))) ends.push_back(static_cast<int>(end));
  }
  return ends;
}

TEST(ExprOracle, PythonMonitorCases) {
  using Ends = std::vector<int>;
  EXPECT_EQ(firing_ends("value > 0.5", 5, {0.9, 0.85, 0.2, 0.92, 0.95, 0.97, 0.99, 1.01}, rldk::all_true), Ends{8});
  EXPECT_EQ(firing_ends("mean(value) > 0.6", 3, {0.4, 0.8, 0.9, 0.2}, rldk::all_true), (Ends{3, 4}));
  EXPECT_EQ(firing_ends("mean(value) > 0.6", 3, {0.4, 0.8, 0.9, 0.2}, rldk::truthy_latest), (Ends{3, 4}));
  EXPECT_EQ(firing_ends("count(value > 0.5) >= 3", 4, {0.6, 0.1, 0.2, 0.3, 0.7, 0.8, 0.9}, rldk::all_true),
            Ends{7});
  // consecutive `value > 0.8` never fires; rolling `any(value > 0.8)` fires at 3 and 4
  EXPECT_EQ(firing_ends("value > 0.8", 3, {0.2, 0.95, 0.3, 0.1}, rldk::all_true), Ends{});
  EXPECT_EQ(firing_ends("any(value > 0.8)", 3, {0.2, 0.95, 0.3, 0.1}, rldk::truthy_latest), (Ends{3, 4}));
  // rolling `value > X` is a test of the latest element only
  EXPECT_EQ(firing_ends("value > 0.8", 3, {0.2, 0.95, 0.3, 0.9}, rldk::truthy_latest), Ends{4});
}

// --- Value helpers ---

TEST(ExprValue, AllTrueAndTruthyLatest) {
  struct Case {
    Value value;
    bool all;
    bool latest;
  };
  std::vector<Case> cases;
  cases.push_back({Value(), false, false});
  cases.push_back({Value::boolean(true), true, true});
  cases.push_back({Value::boolean(false), false, false});
  cases.push_back({Value::number(2.0), true, true});
  cases.push_back({Value::number(0.0), false, false});
  cases.push_back({Value::number(NaN), false, false});
  cases.push_back({Value::string("x"), true, true});
  cases.push_back({Value::string(""), false, false});
  cases.push_back({Value::booleans({}), false, false});
  cases.push_back({Value::booleans({1, 1}), true, true});
  cases.push_back({Value::booleans({0, 1}), false, true});
  cases.push_back({Value::booleans({1, 0}), false, false});
  cases.push_back({Value::numbers({1, NaN}), false, false});
  cases.push_back({Value::numbers({NaN, -1}), false, true});
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(rldk::all_true(cases[i].value), cases[i].all) << "case " << i << ": " << rldk::to_string(cases[i].value);
    EXPECT_EQ(rldk::truthy_latest(cases[i].value), cases[i].latest) << "case " << i;
  }
}

TEST(ExprValue, Accessors) {
  Value v = parse_ok("value > 1").evaluate(window_of({0, 2}));
  EXPECT_EQ(v.kind(), Value::Kind::booleans);
  EXPECT_TRUE(v.is_vector());
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(std::vector<double>(v.elements().begin(), v.elements().end()), (std::vector<double>{0, 1}));
  EXPECT_TRUE(std::isnan(v.as_number()));
  Value m = parse_ok("mean(value)").evaluate(window_of({1, 2}));
  EXPECT_EQ(m.kind(), Value::Kind::number);
  EXPECT_EQ(m.as_number(), 1.5);
  EXPECT_EQ(m.size(), 1u);
  Value s = parse_ok("tags.phase").evaluate(window_of({}));
  EXPECT_EQ(s.kind(), Value::Kind::string);
  EXPECT_EQ(s.as_string(), "train");
  EXPECT_EQ(Value().size(), 0u);
  Value copy_source = parse_ok("value").evaluate(window_of({3}));
  FakeContext gone = window_of({4});
  Value owned = parse_ok("value").evaluate(gone);
  gone.values.assign({9});  // the result owns its elements
  EXPECT_EQ(rldk::to_string(owned), "[4]");
  EXPECT_EQ(rldk::to_string(copy_source), "[3]");
}

TEST(ExprValue, CopiesShareTheParsedForm) {
  Expression a = parse_ok("mean(value) > 0.6");
  Expression b = a;
  EXPECT_EQ(a.to_string(), b.to_string());
  EXPECT_EQ(rldk::to_string(b.evaluate(window_of({0.4, 0.8, 0.9}))), "true");
}

// --- canonical printing ---

TEST(ExprPrint, CanonicalForm) {
  struct Case {
    const char* text;
    const char* canonical;
  };
  for (const Case& c : std::vector<Case>{
           {"value>0.35", "value > 0.35"},
           {"mean( value )<0.1 && !(step > 3)", "mean(value) < 0.1 and not step > 3"},
           {"value > 1 || value < 0", "value > 1 or value < 0"},
           {"(1 + 2) * 3", "(1 + 2) * 3"},
           {"1 + (2 * 3)", "1 + 2 * 3"},
           {"(1 - 2) - 3", "1 - 2 - 3"},
           {"1 - (2 - 3)", "1 - (2 - 3)"},
           {"2 ** (3 ** 2)", "2 ** 3 ** 2"},
           {"(2 ** 3) ** 2", "(2 ** 3) ** 2"},
           {"(-2) ** 2", "(-2) ** 2"},
           {"-(2 ** 2)", "-2 ** 2"},
           {"- -1", "--1"},
           {"(1 < 2) < 3", "(1 < 2) < 3"},
           {"(not true) == false", "(not true) == false"},
           {"not not true", "not not true"},
           {"(true or false) and true", "(true or false) and true"},
           {"true or (false and true)", "true or false and true"},
           {"tags['my-key'] == 'a'", "tags[\"my-key\"] == \"a\""},
           {"tags['ok_key'] == 'a'", "tags.ok_key == \"a\""},
           {"meta.threshold", "meta.threshold"},
           {"tags.if", "tags.if"},
           {"name in ['kl', 'kl_mean']", "name in (\"kl\", \"kl_mean\")"},
           {"value not in (1,)", "value not in (1)"},
           {"1 in ()", "1 in ()"},
           {"True if has(None) else False", "true if has(null) else false"},
           {"(1 if true else 2) if false else 3", "(1 if true else 2) if false else 3"},
           {"1 if true else (2 if false else 3)", "1 if true else 2 if false else 3"},
           {"1e-3 + 1E5 + 2.50", "0.001 + 100000 + 2.5"},
           {"NaN + Infinity", "nan + inf"},
           {"metric('a/b')", "metric(\"a/b\")"},
           {"count ( )", "count()"},
           {"ewma(value,0.5)", "ewma(value, 0.5)"},
           {"'it\\'s\\n'", "\"it's\\n\""},
           {"0.1 < value < 0.5", "0.1 < value < 0.5"},
           {"value if value > 1 else -value", "value if value > 1 else -value"},
       }) {
    Expression e = parse_ok(c.text);
    EXPECT_EQ(e.to_string(), c.canonical) << "input: " << c.text;
    EXPECT_EQ(parse_ok(e.to_string()).to_string(), e.to_string()) << "canonical form does not read back: " << c.text;
  }
}

// --- parse errors: text, expected context, expected start of the message ---

TEST(ExprParseError, ColumnsAndMessages) {
  struct Case {
    std::string text;
    const char* context;
    const char* message;  // a prefix of the message
  };
  for (const Case& c : std::vector<Case>{
           {"value >> 3", "column 8", "expected an expression after '>', found '>'"},
           {"mean(value", "column 11", "expected ')' to close the call of mean opened at column 5, found end of input"},
           {"", "column 1", "expected an expression, found end of input"},
           {"   ", "column 4", "expected an expression, found end of input"},
           {"value >", "column 8", "expected an expression after '>', found end of input"},
           {"value > 1 and", "column 14", "expected an expression after 'and', found end of input"},
           {"1 + + 2", "column 5", "expected an expression after '+', found '+'"},
           {"value > and", "column 9", "expected an expression after '>', found 'and'"},
           {"(value > 1", "column 11", "expected ')' to close the '(' opened at column 1, found end of input"},
           {"((value > 1) and true", "column 22", "expected ')' to close the '(' opened at column 1"},
           {"vaule > 1", "column 1", "unknown name 'vaule' (did you mean 'value'?); known names: value, step"},
           {"foo > 1", "column 1", "unknown name 'foo'; known names:"},
           {"maen(value) > 1", "column 1", "unknown function 'maen' (did you mean 'mean'?); known functions: abs, all"},
           {"frobnicate(value)", "column 1", "unknown function 'frobnicate'; known functions: abs, all, any, count"},
           {"mean(value, 2)", "column 1", "mean takes 1 argument (x), found 2"},
           {"ewma(value)", "column 1", "ewma takes 2 arguments (x, alpha), found 1"},
           {"count(value, 1)", "column 1", "count takes 0 or 1 arguments ([predicate]), found 2"},
           {"abs()", "column 1", "abs takes 1 argument (x), found 0"},
           {"mean(value,)", "column 12", "expected an expression after ',', found ')'"},
           {"ewma(value 0.5)", "column 12",
            "expected ',' or ')' in the call of ewma opened at column 5, found number 0.5"},
           {"value = 3", "column 7", "unexpected '='; use '==' to compare"},
           {"value > 1 & true", "column 11", "unexpected '&'; use 'and' or '&&'"},
           {"value > 1 | true", "column 11", "unexpected '|'; use 'or' or '||'"},
           {"value // 2", "column 7", "unexpected '//'; use '/' to divide"},
           {"value @ 1", "column 7", "unexpected character '@'"},
           {"value > 'abc", "column 9", "unterminated string: the ' here is never closed"},
           {"'\\q'", "column 2", "unknown escape '\\q' in string"},
           {"value > 1.2.3", "column 9", "malformed number '1.2.3'"},
           {"value > 1e", "column 9", "malformed number '1e'"},
           {"value > 3x", "column 9", "malformed number '3x'"},
           {"value > 1e999", "column 9", "number '1e999' is out of range"},
           {"value > 3 3", "column 11", "expected an operator or end of input, found number 3"},
           {"value tags", "column 7", "expected an operator or end of input, found 'tags'"},
           {"value in 3", "column 10", "expected a list such as (\"a\", \"b\") after 'in', found number 3"},
           {"value in (1 2)", "column 13", "expected ',' or ')' in the list opened at column 10, found number 2"},
           {"value in (1, 2) < 3", "column 17", "a list cannot be compared"},
           {"value not 3", "column 11", "expected 'in' after 'not', found number 3"},
           {"metric(name)", "column 8", "metric() takes the metric name as a quoted string"},
           {"metric", "column 1",
            "'metric' is a function; call it with parentheses, e.g. metric(\"policy/grad_norm\")"},
           {"mean > 1", "column 1", "'mean' is a function; call it with parentheses, e.g. mean(value)"},
           {"value(1)", "column 6", "'value' is not a function"},
           {"tags", "column 5", "expected .KEY or [\"KEY\"] after 'tags', found end of input"},
           {"tags.", "column 6", "expected a key name after 'tags.', found end of input"},
           {"tags[1]", "column 6", "expected the key as a quoted string after 'tags[', found number 1"},
           {"meta['k'", "column 9", "expected ']' to close the '[' opened at column 5, found end of input"},
           {"value if value > 1", "column 19", "expected 'else' to complete the 'if' at column 7, found end of input"},
           {"value == null", "column 10", "a comparison with null is always false; to test whether a value is there"},
           {"None != meta.k", "column 1", "a comparison with null is always false"},
           {"value is None", "column 7", "'is' is not an operator; to test whether a metric, tag or meta key is there"},
           {"\"a\" + 1", "column 1", "expected a number for '+', found string \"a\""},
           {"-'a'", "column 2", "expected a number for '-', found string \"a\""},
           {"mean('x')", "column 6", "expected a number for the argument of mean, found string \"x\""},
           {"ewma(value, 1.5)", "column 13", "the alpha of ewma must be in (0, 1], found 1.5"},
           {"ewma(value, 0)", "column 13", "the alpha of ewma must be in (0, 1], found 0"},
           {"value >\n  >", "line 2, column 3", "expected an expression after '>', found '>'"},
           {"name == '\xc3\xa9' and and", "column 17", "expected an expression after 'and', found 'and'"},
           {"value > 1 \x01", "column 11", "unexpected character byte 0x01"},
           {std::string(200, '(') + "1" + std::string(200, ')'), "column 51", "expression is nested too deeply"},
           {std::string(300, '-') + "1", "column 100", "expression is nested too deeply"},
       }) {
    auto parsed = Expression::parse(c.text);
    ASSERT_FALSE(parsed.ok()) << "should not parse: " << c.text;
    const rldk::Error& e = parsed.error();
    EXPECT_EQ(e.code, rldk::ErrorCode::invalid_argument) << c.text;
    EXPECT_EQ(e.context, c.context) << c.text << "\n  message: " << e.message;
    EXPECT_EQ(e.message.substr(0, std::string(c.message).size()), c.message) << c.text;
  }
}

TEST(ExprParseError, LongChainsAreBounded) {
  std::string chain = "1";
  for (int i = 0; i < 500; ++i) chain += " + 1";
  auto parsed = Expression::parse(chain);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("nested too deeply"), std::string::npos);
  std::string list = "value in (1";
  for (int i = 0; i < 500; ++i) list += ", 1";
  EXPECT_TRUE(Expression::parse(list + ")").ok()) << "a long list is wide, not deep";
}

TEST(ExprParseError, OverlongTextIsRejected) {
  std::string text = "value > 1" + std::string(70 * 1024, ' ');
  auto parsed = Expression::parse(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("expression is longer than"), std::string::npos);
}

TEST(ExprParseError, ErrorRendersWithContext) {
  auto parsed = Expression::parse("value >> 3");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(rldk::to_string(parsed.error()), "column 8: expected an expression after '>', found '>'");
}

TEST(ExprFunctions, TableIsComplete) {
  // Every enumerator is in the table under its own name, and the table is sorted (binary search relies on it).
  for (int f = 0; f <= static_cast<int>(rldk::rules::Function::metric); ++f) {
    const auto& info = rldk::rules::function_info(static_cast<rldk::rules::Function>(f));
    EXPECT_EQ(static_cast<int>(info.function), f);
    EXPECT_EQ(rldk::rules::find_function(info.name), &info);
  }
  auto all = rldk::rules::all_functions();
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].name, all[i].name);
}

}  // namespace
