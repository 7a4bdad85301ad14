#include "rules/evaluator.h"

#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "rules/operations.h"
#include "rules/window_stats.h"

namespace rldk::rules {
namespace {

class Evaluator {
 public:
  Evaluator(const Program& program, const EvalContext& context)
      : program_(program), context_(context), values_(context.window_values()), steps_(context.window_steps()) {
    // The two spans should have one length. A context that breaks that still gets its values; the steps are aligned
    // on the latest element, or unknown (`step` is missing, slope NaN) when there are too few.
    if (steps_.size() != values_.size()) {
      steps_ = steps_.size() > values_.size() ? steps_.last(values_.size()) : std::span<const int64_t>();
    }
  }

  Operand eval(uint32_t index) {
    const Node& n = program_.nodes[index];
    switch (n.kind) {
      case NodeKind::number: return Operand::number(n.number);
      case NodeKind::string: return Operand::string(n.text);
      case NodeKind::boolean: return Operand::boolean(n.number != 0.0);
      case NodeKind::null: return {};
      case NodeKind::value:
        return values_.empty() ? Operand() : Operand::view(Operand::Kind::numbers, values_);
      case NodeKind::step: return window_steps();
      case NodeKind::time: return Operand::number(context_.time());
      case NodeKind::name: return Operand::string(context_.name());
      case NodeKind::run_id: return Operand::string(context_.run_id());
      case NodeKind::tag: return optional_string(context_.tag(n.text));
      case NodeKind::meta: return optional_string(context_.meta(n.text));
      case NodeKind::negate: {
        Operand a = to_numeric(eval(n.children[0]));
        if (a.is_missing()) return a;
        return map_elements(a, false, [](double x) { return -x; });
      }
      case NodeKind::logical_not:
        return map_elements(truth(eval(n.children[0])), true, [](double x) { return x == 0.0; });
      case NodeKind::logical_and:
      case NodeKind::logical_or: {
        // Both sides are always evaluated: with vectors, a short-circuit would change the shape of the result.
        Operand a = truth(eval(n.children[0]));
        Operand b = truth(eval(n.children[1]));
        return logical(n.kind == NodeKind::logical_and, a, b);
      }
      case NodeKind::add:
      case NodeKind::subtract:
      case NodeKind::multiply:
      case NodeKind::divide:
      case NodeKind::modulo:
      case NodeKind::power: {
        Operand a = eval(n.children[0]);
        Operand b = eval(n.children[1]);
        return arithmetic(n.kind, std::move(a), std::move(b));
      }
      case NodeKind::compare: return compare_chain(n);
      case NodeKind::list: return {};  // only meaningful after `in`, handled by compare_chain
      case NodeKind::conditional: return conditional(n);
      case NodeKind::call: return call(n);
    }
    return {};
  }

 private:
  static Operand optional_string(std::optional<std::string_view> s) { return s ? Operand::string(*s) : Operand(); }

  Operand window_steps() const {
    if (steps_.empty()) return {};
    Operand out = Operand::sized(Operand::Kind::numbers, steps_.size());
    double* o = out.data();
    for (size_t i = 0; i < steps_.size(); ++i) o[i] = static_cast<double>(steps_[i]);
    return out;
  }

  // a op1 b op2 c  ==  (a op1 b) and (b op2 c), each operand evaluated once.
  Operand compare_chain(const Node& n) {
    Operand left = eval(n.children[0]);
    Operand result;
    for (size_t i = 0; i < n.ops.size(); ++i) {
      const Node& right_node = program_.nodes[n.children[i + 1]];
      Operand r;
      Operand right;
      if (n.ops[i] == CompareOp::in || n.ops[i] == CompareOp::not_in) {
        r = membership(n.ops[i] == CompareOp::in, left, right_node);
      } else {
        right = eval(n.children[i + 1]);
        r = compare(n.ops[i], left, right);
      }
      result = i == 0 ? std::move(r) : logical(true, result, r);
      left = std::move(right);
    }
    return result;
  }

  // x in (a, b) == (x == a) or (x == b); x not in (a, b) == (x != a) and (x != b); false when x is missing.
  Operand membership(bool in, const Operand& x, const Node& list) {
    if (x.is_missing()) return Operand::boolean(false);
    Operand result = Operand::boolean(!in);
    for (uint32_t c : list.children) {
      Operand element = eval(c);
      Operand r = compare(in ? CompareOp::equal : CompareOp::not_equal, x, element);
      result = logical(!in, result, r);
    }
    return result;
  }

  Operand conditional(const Node& n) {
    Operand condition = truth(eval(n.children[1]));
    if (!condition.is_vector()) return eval(n.children[condition.scalar() != 0.0 ? 0 : 2]);
    // A window condition selects element by element, which needs numbers (or booleans) on both sides.
    Operand a = to_numeric(eval(n.children[0]));
    Operand b = to_numeric(eval(n.children[2]));
    if (a.is_missing() || b.is_missing()) return {};
    const bool boolean = a.is_boolean_kind() && b.is_boolean_kind();
    Operand out = Operand::sized(boolean ? Operand::Kind::booleans : Operand::Kind::numbers, condition.length());
    double* o = out.data();
    for (size_t i = 0; i < condition.length(); ++i) {
      // Broadcasting: a vector branch shorter than the condition (never from one window) reads as NaN.
      const Operand& branch = condition.at(i) != 0.0 ? a : b;
      o[i] = branch.is_vector() && i >= branch.length() ? std::nan("") : branch.at(i);
    }
    return out;
  }

  Operand call(const Node& n) {
    switch (n.function) {
      case Function::metric: {
        std::optional<double> x = context_.metric(n.text);
        return x ? Operand::number(*x) : Operand();
      }
      case Function::has: return Operand::boolean(!eval(n.children[0]).is_missing());
      case Function::isnan:
      case Function::isfinite: {
        Operand a = to_numeric(eval(n.children[0]));
        if (a.is_missing()) return Operand::boolean(false);
        if (n.function == Function::isnan) return map_elements(a, true, [](double x) { return std::isnan(x); });
        return map_elements(a, true, [](double x) { return std::isfinite(x); });
      }
      case Function::abs:
      case Function::sqrt:
      case Function::log: {
        Operand a = to_numeric(eval(n.children[0]));
        if (a.is_missing()) return a;
        if (n.function == Function::abs) return map_elements(a, false, [](double x) { return std::fabs(x); });
        if (n.function == Function::sqrt) return map_elements(a, false, [](double x) { return std::sqrt(x); });
        return map_elements(a, false, [](double x) { return std::log(x); });
      }
      default: return aggregate(n);
    }
  }

  Operand aggregate(const Node& n) {
    if (n.function == Function::count && n.children.empty()) {
      return Operand::number(static_cast<double>(values_.size()));
    }
    Operand a = to_numeric(eval(n.children[0]));
    if (a.is_missing()) return a;
    std::span<const double> xs = a.elements();  // a scalar is a window of one
    switch (n.function) {
      case Function::count: return Operand::number(static_cast<double>(count_true(xs)));
      case Function::any: return Operand::boolean(count_true(xs) > 0);
      case Function::all: return Operand::boolean(count_true(xs) == xs.size());
      case Function::mean: return Operand::number(window_mean(xs));
      case Function::median: return Operand::number(window_median(xs));
      case Function::min: return Operand::number(window_min(xs));
      case Function::max: return Operand::number(window_max(xs));
      case Function::sum: return Operand::number(window_sum(xs));
      case Function::stddev: return Operand::number(window_stddev(xs));
      case Function::variance: return Operand::number(window_variance(xs));
      case Function::first: return Operand::number(window_first(xs));
      case Function::last: return Operand::number(window_last(xs));
      case Function::delta: return Operand::number(window_delta(xs));
      case Function::pct_change: return Operand::number(window_pct_change(xs));
      case Function::zscore: return Operand::number(window_zscore(xs));
      case Function::robust_z: return Operand::number(window_robust_z(xs));
      case Function::slope: {
        // Element i of a window vector belongs to step i; a scalar stands at the latest step.
        std::span<const int64_t> steps = steps_;
        if (!a.is_vector() || xs.size() != steps_.size()) steps = steps_.empty() ? steps_ : steps_.last(1);
        return Operand::number(window_slope(xs, steps));
      }
      case Function::ewma: {
        Operand alpha = to_numeric(eval(n.children[1]));
        if (alpha.is_missing() || alpha.length() == 0) return Operand();
        // A window alpha means its latest element (scalar context).
        return Operand::number(window_ewma(xs, alpha.at(alpha.length() - 1)));
      }
      default: return {};
    }
  }

  static size_t count_true(std::span<const double> xs) {
    size_t count = 0;
    for (double x : xs) count += (x != 0.0 && !std::isnan(x)) ? 1 : 0;
    return count;
  }

  const Program& program_;
  const EvalContext& context_;
  std::span<const double> values_;
  std::span<const int64_t> steps_;
};

}  // namespace

namespace {

bool truthy(double x) { return x != 0.0 && !std::isnan(x); }

// Whether a node (and everything below it) can be computed in doubles. `Shape::element`: `value` is one window
// element and no window function appears. `Shape::window`: `value` appears only as the argument of window functions
// (mean(value), max(value) - min(value)), which read the whole window, so the result is one scalar.
bool scalar_node(const Program& p, uint32_t index, ScalarShape shape) {
  const Node& n = p.nodes[index];
  switch (n.kind) {
    case NodeKind::value:
      if (shape != ScalarShape::element) return false;
      break;
    case NodeKind::number:
    case NodeKind::boolean:
    case NodeKind::negate:
    case NodeKind::logical_not:
    case NodeKind::logical_and:
    case NodeKind::logical_or:
    case NodeKind::add:
    case NodeKind::subtract:
    case NodeKind::multiply:
    case NodeKind::divide:
    case NodeKind::modulo:
    case NodeKind::power:
    case NodeKind::conditional:
    case NodeKind::list: break;
    case NodeKind::compare:
      // A membership test inside a chain leaves the next comparison without its left side (the general evaluator
      // reads it as missing): only a last one is taken here.
      for (size_t i = 0; i + 1 < n.ops.size(); ++i) {
        if (n.ops[i] == CompareOp::in || n.ops[i] == CompareOp::not_in) return false;
      }
      break;
    case NodeKind::call:
      if (function_info(n.function).window) {
        if (shape != ScalarShape::window) return false;
        if (n.children.empty()) return n.function == Function::count;  // count(): the window's length
        // Over the window itself; ewma's alpha a literal.
        if (p.nodes[n.children[0]].kind != NodeKind::value) return false;
        return n.function != Function::ewma || p.nodes[n.children[1]].kind == NodeKind::number;
      }
      if (n.function != Function::abs && n.function != Function::sqrt && n.function != Function::log &&
          n.function != Function::isnan && n.function != Function::isfinite) {
        return false;
      }
      break;
    default: return false;  // strings, step, time, names, tags, meta, null
  }
  for (uint32_t c : n.children) {
    if (!scalar_node(p, c, shape)) return false;
  }
  return true;
}

size_t count_truthy(std::span<const double> xs) {
  size_t count = 0;
  for (double x : xs) count += truthy(x) ? 1 : 0;
  return count;
}

// The same operations as Evaluator::eval, in doubles (booleans as 0 and 1): `v` is the element (Shape::element),
// `window` and `steps` the whole window (Shape::window). Both sides of and/or are pure here, so their order of
// evaluation does not matter.
double scalar(const Program& p, uint32_t index, double v, std::span<const double> window,
              std::span<const int64_t> steps) {
  const Node& n = p.nodes[index];
  auto child = [&](size_t i) { return scalar(p, n.children[i], v, window, steps); };
  switch (n.kind) {
    case NodeKind::number: return n.number;
    case NodeKind::boolean: return n.number != 0.0 ? 1.0 : 0.0;
    case NodeKind::value: return v;
    case NodeKind::negate: return -child(0);
    case NodeKind::logical_not: return truthy(child(0)) ? 0.0 : 1.0;
    case NodeKind::logical_and: return truthy(child(0)) && truthy(child(1)) ? 1.0 : 0.0;
    case NodeKind::logical_or: return truthy(child(0)) || truthy(child(1)) ? 1.0 : 0.0;
    case NodeKind::add: return child(0) + child(1);
    case NodeKind::subtract: return child(0) - child(1);
    case NodeKind::multiply: return child(0) * child(1);
    case NodeKind::divide: return child(0) / child(1);
    case NodeKind::modulo: return python_modulo(child(0), child(1));
    case NodeKind::power: return std::pow(child(0), child(1));
    case NodeKind::conditional: return truthy(child(1)) ? child(0) : child(2);
    case NodeKind::compare: {
      double left = child(0);
      bool result = true;
      for (size_t i = 0; i < n.ops.size(); ++i) {
        const CompareOp op = n.ops[i];
        if (op == CompareOp::in || op == CompareOp::not_in) {
          // x in (a, b) == (x == a) or (x == b); x not in (a, b) == (x != a) and (x != b).
          const Node& list = p.nodes[n.children[i + 1]];
          bool member = op == CompareOp::not_in;
          for (uint32_t c : list.children) {
            const double e = scalar(p, c, v, window, steps);
            member = op == CompareOp::in ? member || left == e : member && left != e;
          }
          result = result && member;
          continue;
        }
        const double right = child(i + 1);
        result = result && compare_numbers(op, left, right);
        left = right;
      }
      return result ? 1.0 : 0.0;
    }
    case NodeKind::call:
      switch (n.function) {
        case Function::abs: return std::fabs(child(0));
        case Function::sqrt: return std::sqrt(child(0));
        case Function::log: return std::log(child(0));
        case Function::isnan: return std::isnan(child(0)) ? 1.0 : 0.0;
        case Function::isfinite: return std::isfinite(child(0)) ? 1.0 : 0.0;
        case Function::count:
          return static_cast<double>(n.children.empty() ? window.size() : count_truthy(window));
        case Function::any: return count_truthy(window) > 0 ? 1.0 : 0.0;
        case Function::all: return count_truthy(window) == window.size() ? 1.0 : 0.0;
        case Function::mean: return window_mean(window);
        case Function::median: return window_median(window);
        case Function::min: return window_min(window);
        case Function::max: return window_max(window);
        case Function::sum: return window_sum(window);
        case Function::stddev: return window_stddev(window);
        case Function::variance: return window_variance(window);
        case Function::first: return window_first(window);
        case Function::last: return window_last(window);
        case Function::delta: return window_delta(window);
        case Function::pct_change: return window_pct_change(window);
        case Function::zscore: return window_zscore(window);
        case Function::robust_z: return window_robust_z(window);
        case Function::slope:
          // Aligned as the general evaluator aligns them: on the latest element when the lengths differ.
          return window_slope(window, steps.size() == window.size() ? steps
                                      : steps.size() > window.size() ? steps.last(window.size())
                                                                     : std::span<const int64_t>());
        case Function::ewma: return window_ewma(window, p.nodes[n.children[1]].number);
        default: break;
      }
      break;
    default: break;
  }
  return std::nan("");  // unreachable for a scalar program
}

}  // namespace

ScalarShape scalar_shape(const Program& program) {
  if (program.nodes.empty()) return ScalarShape::none;
  if (scalar_node(program, program.root, ScalarShape::element)) return ScalarShape::element;
  if (scalar_node(program, program.root, ScalarShape::window)) return ScalarShape::window;
  return ScalarShape::none;
}

double evaluate_scalar(const Program& program, double element, std::span<const double> window,
                       std::span<const int64_t> steps) {
  return scalar(program, program.root, element, window, steps);
}

Operand evaluate_program(const Program& program, const EvalContext& context) {
  if (program.nodes.empty()) return {};
  return Evaluator(program, context).eval(program.root);
}

}  // namespace rldk::rules
