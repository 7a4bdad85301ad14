#include "rules/printer.h"

#include <charconv>
#include <cmath>

#include "rules/lexer.h"

namespace rldk::rules {
namespace {

// Binding strength, loosest first; mirrors the grammar in parser.cpp. A child printed where a tighter level is
// required gets parentheses, so the canonical text has none that are redundant and parses back to the same tree.
enum Level : int { CONDITIONAL = 1, OR, AND, NOT, COMPARISON, ADDITIVE, MULTIPLICATIVE, UNARY, POWER, ATOM };

Level level_of(const Node& n) {
  switch (n.kind) {
    case NodeKind::conditional: return CONDITIONAL;
    case NodeKind::logical_or: return OR;
    case NodeKind::logical_and: return AND;
    case NodeKind::logical_not: return NOT;
    case NodeKind::compare: return COMPARISON;
    case NodeKind::add:
    case NodeKind::subtract: return ADDITIVE;
    case NodeKind::multiply:
    case NodeKind::divide:
    case NodeKind::modulo: return MULTIPLICATIVE;
    case NodeKind::negate: return UNARY;
    case NodeKind::power: return POWER;
    default: return ATOM;
  }
}

std::string_view compare_text(CompareOp op) {
  switch (op) {
    case CompareOp::less: return "<";
    case CompareOp::less_equal: return "<=";
    case CompareOp::greater: return ">";
    case CompareOp::greater_equal: return ">=";
    case CompareOp::equal: return "==";
    case CompareOp::not_equal: return "!=";
    case CompareOp::in: return "in";
    case CompareOp::not_in: return "not in";
  }
  return "?";
}

std::string_view binary_text(NodeKind kind) {
  switch (kind) {
    case NodeKind::logical_or: return " or ";
    case NodeKind::logical_and: return " and ";
    case NodeKind::add: return " + ";
    case NodeKind::subtract: return " - ";
    case NodeKind::multiply: return " * ";
    case NodeKind::divide: return " / ";
    case NodeKind::modulo: return " % ";
    case NodeKind::power: return " ** ";
    default: return " ? ";
  }
}

class Printer {
 public:
  explicit Printer(const Program& program) : program_(program) {}

  void print(uint32_t index, Level required) {
    const Node& n = program_.nodes[index];
    const bool parenthesize = level_of(n) < required;
    if (parenthesize) out_ += '(';
    render(n);
    if (parenthesize) out_ += ')';
  }

  std::string take() { return std::move(out_); }

 private:
  void render(const Node& n) {
    switch (n.kind) {
      case NodeKind::number: out_ += format_number(n.number); return;
      case NodeKind::string: out_ += quote_string(n.text); return;
      case NodeKind::boolean: out_ += n.number != 0.0 ? "true" : "false"; return;
      case NodeKind::null: out_ += "null"; return;
      case NodeKind::value: out_ += "value"; return;
      case NodeKind::step: out_ += "step"; return;
      case NodeKind::time: out_ += "time"; return;
      case NodeKind::name: out_ += "name"; return;
      case NodeKind::run_id: out_ += "run_id"; return;
      case NodeKind::tag:
      case NodeKind::meta: key_access(n); return;
      case NodeKind::negate: out_ += '-'; print(n.children[0], UNARY); return;
      case NodeKind::logical_not: out_ += "not "; print(n.children[0], NOT); return;
      case NodeKind::logical_or: binary(n, OR, AND); return;
      case NodeKind::logical_and: binary(n, AND, NOT); return;
      case NodeKind::add:
      case NodeKind::subtract: binary(n, ADDITIVE, MULTIPLICATIVE); return;
      case NodeKind::multiply:
      case NodeKind::divide:
      case NodeKind::modulo: binary(n, MULTIPLICATIVE, UNARY); return;
      case NodeKind::power: binary(n, ATOM, UNARY); return;  // right-associative: the base must be an atom
      case NodeKind::compare: comparison(n); return;
      case NodeKind::list: sequence(n.children, "(", ")"); return;
      case NodeKind::conditional:
        print(n.children[0], OR);
        out_ += " if ";
        print(n.children[1], OR);
        out_ += " else ";
        print(n.children[2], CONDITIONAL);
        return;
      case NodeKind::call:
        out_ += function_info(n.function).name;
        if (n.function == Function::metric) {
          out_ += "(" + quote_string(n.text) + ")";
        } else {
          sequence(n.children, "(", ")");
        }
        return;
    }
  }

  void binary(const Node& n, Level left, Level right) {
    print(n.children[0], left);
    out_ += binary_text(n.kind);
    print(n.children[1], right);
  }

  void comparison(const Node& n) {
    print(n.children[0], ADDITIVE);
    for (size_t i = 0; i < n.ops.size(); ++i) {
      out_ += ' ';
      out_ += compare_text(n.ops[i]);
      out_ += ' ';
      print(n.children[i + 1], ADDITIVE);  // a list is an atom
    }
  }

  void sequence(const std::vector<uint32_t>& items, std::string_view open, std::string_view close) {
    out_ += open;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_ += ", ";
      print(items[i], CONDITIONAL);
    }
    out_ += close;
  }

  void key_access(const Node& n) {
    out_ += n.kind == NodeKind::tag ? "tags" : "meta";
    if (is_identifier(n.text)) {
      out_ += '.';
      out_ += n.text;
    } else {
      out_ += '[' + quote_string(n.text) + ']';
    }
  }

  const Program& program_;
  std::string out_;
};

}  // namespace

std::string print_program(const Program& program) {
  if (program.nodes.empty()) return {};
  Printer printer(program);
  printer.print(program.root, CONDITIONAL);
  return printer.take();
}

std::string format_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // Whole numbers below this print in full ("100000", not the shorter "1e+05"): thresholds read better so.
  constexpr double PLAIN_INTEGER_LIMIT = 1e15;
  constexpr size_t ENOUGH = 32;  // the longest shortest-form double is 24 characters; integers below 1e15 fewer
  char buffer[ENOUGH];
  const bool plain = std::fabs(x) < PLAIN_INTEGER_LIMIT && x == std::trunc(x);
  auto [end, ec] = plain ? std::to_chars(buffer, buffer + ENOUGH, x, std::chars_format::fixed)
                         : std::to_chars(buffer, buffer + ENOUGH, x);
  return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

std::string quote_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

}  // namespace rldk::rules
