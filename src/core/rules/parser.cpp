#include "rules/parser.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "rules/lexer.h"
#include "rules/suggest.h"

namespace rldk::rules {
namespace {

constexpr uint32_t FAILED = std::numeric_limits<uint32_t>::max();
constexpr double NOT_A_NUMBER = std::numeric_limits<double>::quiet_NaN();
constexpr double INFINITE = std::numeric_limits<double>::infinity();

// Names a rule can read directly; tags and meta need a key.
constexpr std::array<std::string_view, 7> KNOWN_NAMES = {"value", "step", "time", "name", "run_id", "tags", "meta"};
constexpr std::string_view KNOWN_NAMES_TEXT = "value, step, time, name, run_id, tags.KEY, meta.KEY";

// Words the grammar reserves; they cannot name a variable (but can follow `tags.`).
constexpr std::array<std::string_view, 17> KEYWORDS = {"and",  "or",    "not",   "in",   "if",  "else",
                                                       "is",   "true",  "True",  "false", "False", "null",
                                                       "None", "nan",   "NaN",   "inf",  "Infinity"};

bool is_keyword(std::string_view word) {
  return std::find(KEYWORDS.begin(), KEYWORDS.end(), word) != KEYWORDS.end();
}

std::optional<CompareOp> comparison_symbol(std::string_view s) {
  if (s == "<") return CompareOp::less;
  if (s == "<=") return CompareOp::less_equal;
  if (s == ">") return CompareOp::greater;
  if (s == ">=") return CompareOp::greater_equal;
  if (s == "==") return CompareOp::equal;
  if (s == "!=") return CompareOp::not_equal;
  return std::nullopt;
}

// The literal a keyword stands for (true, None, nan, ...), if it is one.
std::optional<Node> keyword_literal(std::string_view w) {
  Node n;
  if (w == "true" || w == "True" || w == "false" || w == "False") {
    n.kind = NodeKind::boolean;
    n.number = (w[0] == 't' || w[0] == 'T') ? 1.0 : 0.0;
  } else if (w == "null" || w == "None") {
    n.kind = NodeKind::null;
  } else if (w == "nan" || w == "NaN") {
    n.kind = NodeKind::number;
    n.number = NOT_A_NUMBER;
  } else if (w == "inf" || w == "Infinity") {
    n.kind = NodeKind::number;
    n.number = INFINITE;
  } else {
    return std::nullopt;
  }
  return n;
}

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens) : text_(text), tokens_(std::move(tokens)) {}

  Result<Program> run() {
    uint32_t root = parse_conditional();
    if (root != FAILED && peek().kind != TokenKind::end) {
      if (is_word(peek(), "is")) {
        fail_is(peek());
      } else {
        fail(peek().offset, "expected an operator or end of input, found " + describe_token(peek()));
      }
    }
    if (error_) return std::move(*error_);
    program_.root = root;
    auto& metrics = program_.metrics;
    std::sort(metrics.begin(), metrics.end());
    metrics.erase(std::unique(metrics.begin(), metrics.end()), metrics.end());
    return std::move(program_);
  }

 private:
  // Counts recursion through the grammar; see MAX_NESTING.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) { ok_ = ++p_.nesting_ <= MAX_NESTING; }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    bool ok() const { return ok_; }

   private:
    Parser& p_;
    bool ok_;
  };

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  static bool is_symbol(const Token& t, std::string_view s) { return t.kind == TokenKind::symbol && t.source == s; }
  static bool is_word(const Token& t, std::string_view w) { return t.kind == TokenKind::identifier && t.source == w; }

  uint32_t fail(size_t offset, std::string message) {
    if (!error_) error_ = Error{ErrorCode::invalid_argument, std::move(message), describe_position(text_, offset)};
    return FAILED;
  }
  uint32_t fail_too_deep() {
    return fail(peek().offset, "expression is nested too deeply (more than " + std::to_string(MAX_NESTING) +
                                   " levels)");
  }
  uint32_t fail_is(const Token& t) {
    return fail(t.offset, "'is' is not an operator; to test whether a metric, tag or meta key is there use has(x) "
                          "or not has(x)");
  }
  std::string column_of(size_t offset) const { return describe_position(text_, offset); }
  // "expected an expression after '>', found '>'"
  uint32_t fail_expected_expression() {
    std::string message = "expected an expression";
    if (pos_ > 0) message += " after " + describe_token(tokens_[pos_ - 1]);
    return fail(peek().offset, message + ", found " + describe_token(peek()));
  }

  uint32_t add(Node node) {
    for (uint32_t c : node.children) node.depth = std::max(node.depth, program_.nodes[c].depth + 1);
    if (node.depth > MAX_NESTING) return fail_too_deep();
    program_.nodes.push_back(std::move(node));
    return static_cast<uint32_t>(program_.nodes.size() - 1);
  }
  uint32_t add_leaf(NodeKind kind, uint32_t offset, double number = 0.0, std::string text = {}) {
    Node n;
    n.kind = kind;
    n.offset = offset;
    n.number = number;
    n.text = std::move(text);
    return add(std::move(n));
  }
  uint32_t add_operator(NodeKind kind, const Token& op, std::vector<uint32_t> children) {
    Node n;
    n.kind = kind;
    n.offset = op.offset;
    n.children = std::move(children);
    return add(std::move(n));
  }

  // A string literal cannot be an operand of arithmetic; say so now rather than yield missing at every event.
  bool check_numeric(uint32_t node, std::string_view use) {
    const Node& n = program_.nodes[node];
    if (n.kind != NodeKind::string) return true;
    fail(n.offset, "expected a number for " + std::string(use) + ", found string \"" + n.text + "\"");
    return false;
  }

  // conditional := or_expr ['if' or_expr 'else' conditional]
  uint32_t parse_conditional() {
    Nesting nesting(*this);
    if (!nesting.ok()) return fail_too_deep();
    uint32_t then_value = parse_or();
    if (then_value == FAILED || !is_word(peek(), "if")) return then_value;
    const Token& if_token = advance();
    uint32_t condition = parse_or();
    if (condition == FAILED) return FAILED;
    if (!is_word(peek(), "else")) {
      return fail(peek().offset, "expected 'else' to complete the 'if' at " + column_of(if_token.offset) +
                                     ", found " + describe_token(peek()));
    }
    advance();
    uint32_t else_value = parse_conditional();
    if (else_value == FAILED) return FAILED;
    return add_operator(NodeKind::conditional, if_token, {then_value, condition, else_value});
  }

  // or_expr := and_expr {('or' | '||') and_expr}
  uint32_t parse_or() {
    uint32_t left = parse_and();
    while (left != FAILED && (is_word(peek(), "or") || is_symbol(peek(), "||"))) {
      const Token& op = advance();
      uint32_t right = parse_and();
      if (right == FAILED) return FAILED;
      left = add_operator(NodeKind::logical_or, op, {left, right});
    }
    return left;
  }

  // and_expr := not_expr {('and' | '&&') not_expr}
  uint32_t parse_and() {
    uint32_t left = parse_not();
    while (left != FAILED && (is_word(peek(), "and") || is_symbol(peek(), "&&"))) {
      const Token& op = advance();
      uint32_t right = parse_not();
      if (right == FAILED) return FAILED;
      left = add_operator(NodeKind::logical_and, op, {left, right});
    }
    return left;
  }

  // not_expr := ('not' | '!') not_expr | comparison
  uint32_t parse_not() {
    if (!is_word(peek(), "not") && !is_symbol(peek(), "!")) return parse_comparison();
    Nesting nesting(*this);
    if (!nesting.ok()) return fail_too_deep();
    const Token& op = advance();
    uint32_t operand = parse_not();
    if (operand == FAILED) return FAILED;
    return add_operator(NodeKind::logical_not, op, {operand});
  }

  // comparison := additive {compare_op additive | ['not'] 'in' list}; chains like Python's: a < b < c.
  uint32_t parse_comparison() {
    uint32_t first = parse_additive();
    if (first == FAILED) return FAILED;
    Node chain;
    chain.kind = NodeKind::compare;
    chain.children.push_back(first);
    while (true) {
      const Token& t = peek();
      std::optional<CompareOp> op;
      if (t.kind == TokenKind::symbol) op = comparison_symbol(t.source);
      if (is_word(t, "in")) op = CompareOp::in;
      if (is_word(t, "not")) {
        if (!is_word(peek(1), "in")) {
          return fail(peek(1).offset, "expected 'in' after 'not', found " + describe_token(peek(1)));
        }
        advance();
        op = CompareOp::not_in;
      }
      if (is_word(t, "is")) return fail_is(t);
      if (!op) break;
      const Token& op_token = advance();
      if (chain.children.size() == 1) chain.offset = op_token.offset;
      const bool membership = *op == CompareOp::in || *op == CompareOp::not_in;
      uint32_t operand = membership ? parse_list(op_token) : parse_additive();
      if (operand == FAILED) return FAILED;
      chain.ops.push_back(*op);
      chain.children.push_back(operand);
      // Python would go on to compare the list itself (`x in (1, 2) < 3`); that is never what a rule means.
      const Token& next = peek();
      if (membership && ((next.kind == TokenKind::symbol && comparison_symbol(next.source)) ||
                         is_word(next, "in") || is_word(next, "not"))) {
        return fail(next.offset, "a list cannot be compared; put the 'in' test in parentheses, found " +
                                     describe_token(next));
      }
    }
    if (chain.ops.empty()) return first;
    // x == null is never true (a comparison with missing is false); point users to has() instead.
    for (uint32_t c : chain.children) {
      if (program_.nodes[c].kind == NodeKind::null) {
        return fail(program_.nodes[c].offset,
                    "a comparison with null is always false; to test whether a value is there use has(x) or "
                    "not has(x)");
      }
    }
    return add(std::move(chain));
  }

  // list := '(' [conditional {',' conditional} [',']] ')' | '[' ... ']'
  uint32_t parse_list(const Token& in_token) {
    const Token& open = peek();
    if (!is_symbol(open, "(") && !is_symbol(open, "[")) {
      return fail(open.offset, "expected a list such as (\"a\", \"b\") after " + describe_token(in_token) +
                                   ", found " + describe_token(open));
    }
    advance();
    const std::string_view close = open.source == "(" ? ")" : "]";
    Node list;
    list.kind = NodeKind::list;
    list.offset = open.offset;
    while (!is_symbol(peek(), close)) {
      uint32_t element = parse_conditional();
      if (element == FAILED) return FAILED;
      list.children.push_back(element);
      if (is_symbol(peek(), ",")) {
        advance();
        continue;
      }
      if (!is_symbol(peek(), close)) {
        return fail(peek().offset, "expected ',' or '" + std::string(close) + "' in the list opened at " +
                                       column_of(open.offset) + ", found " + describe_token(peek()));
      }
    }
    advance();
    return add(std::move(list));
  }

  // additive := multiplicative {('+' | '-') multiplicative}
  uint32_t parse_additive() {
    uint32_t left = parse_multiplicative();
    while (left != FAILED && (is_symbol(peek(), "+") || is_symbol(peek(), "-"))) {
      const Token& op = advance();
      uint32_t right = parse_multiplicative();
      if (right == FAILED) return FAILED;
      std::string use = "'" + std::string(op.source) + "'";
      if (!check_numeric(left, use) || !check_numeric(right, use)) return FAILED;
      left = add_operator(op.source == "+" ? NodeKind::add : NodeKind::subtract, op, {left, right});
    }
    return left;
  }

  // multiplicative := unary {('*' | '/' | '%') unary}
  uint32_t parse_multiplicative() {
    uint32_t left = parse_unary();
    while (left != FAILED && (is_symbol(peek(), "*") || is_symbol(peek(), "/") || is_symbol(peek(), "%"))) {
      const Token& op = advance();
      uint32_t right = parse_unary();
      if (right == FAILED) return FAILED;
      std::string use = "'" + std::string(op.source) + "'";
      if (!check_numeric(left, use) || !check_numeric(right, use)) return FAILED;
      NodeKind kind = op.source == "*" ? NodeKind::multiply : op.source == "/" ? NodeKind::divide : NodeKind::modulo;
      left = add_operator(kind, op, {left, right});
    }
    return left;
  }

  // unary := '-' unary | power
  uint32_t parse_unary() {
    if (!is_symbol(peek(), "-")) return parse_power();
    Nesting nesting(*this);
    if (!nesting.ok()) return fail_too_deep();
    const Token& op = advance();
    uint32_t operand = parse_unary();
    if (operand == FAILED || !check_numeric(operand, "'-'")) return FAILED;
    return add_operator(NodeKind::negate, op, {operand});
  }

  // power := primary ['**' unary]   (right-associative; -2 ** 2 is -(2 ** 2), 2 ** -1 is allowed)
  uint32_t parse_power() {
    uint32_t base = parse_primary();
    if (base == FAILED || !is_symbol(peek(), "**")) return base;
    const Token& op = advance();
    uint32_t exponent = parse_unary();
    if (exponent == FAILED) return FAILED;
    if (!check_numeric(base, "'**'") || !check_numeric(exponent, "'**'")) return FAILED;
    return add_operator(NodeKind::power, op, {base, exponent});
  }

  uint32_t parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::number: advance(); return add_leaf(NodeKind::number, t.offset, t.number);
      case TokenKind::string: advance(); return add_leaf(NodeKind::string, t.offset, 0.0, t.text);
      case TokenKind::identifier: return parse_word();
      case TokenKind::symbol: break;
      case TokenKind::end: return fail_expected_expression();
    }
    if (!is_symbol(t, "(")) return fail_expected_expression();
    Nesting nesting(*this);
    if (!nesting.ok()) return fail_too_deep();
    const Token& open = advance();
    uint32_t inner = parse_conditional();
    if (inner == FAILED) return FAILED;
    if (!is_symbol(peek(), ")")) {
      return fail(peek().offset, "expected ')' to close the '(' opened at " + column_of(open.offset) + ", found " +
                                     describe_token(peek()));
    }
    advance();
    return inner;
  }

  // A literal keyword, a name, tags/meta access, or a function call.
  uint32_t parse_word() {
    const Token& t = peek();
    std::string_view w = t.source;
    std::optional<Node> literal = keyword_literal(w);
    if (literal) {
      advance();
      literal->offset = t.offset;
      return add(std::move(*literal));
    }
    if (is_keyword(w)) return fail_expected_expression();
    const bool called = is_symbol(peek(1), "(");
    if (const FunctionInfo* f = find_function(w)) {
      if (!called) {
        std::string example = f->function == Function::metric ? "metric(\"policy/grad_norm\")"
                              : f->function == Function::count  ? "count()"
                                                                 : std::string(w) + "(value)";
        return fail(t.offset, "'" + std::string(w) + "' is a function; call it with parentheses, e.g. " + example);
      }
      return parse_call(*f);
    }
    std::optional<NodeKind> kind;
    if (w == "value") kind = NodeKind::value;
    if (w == "step") kind = NodeKind::step;
    if (w == "time") kind = NodeKind::time;
    if (w == "name") kind = NodeKind::name;
    if (w == "run_id") kind = NodeKind::run_id;
    if (w == "tags") kind = NodeKind::tag;
    if (w == "meta") kind = NodeKind::meta;
    if (kind && called) return fail(peek(1).offset, "'" + std::string(w) + "' is not a function");
    if (kind == NodeKind::tag || kind == NodeKind::meta) return parse_key_access(*kind);
    if (kind) {
      advance();
      return add_leaf(*kind, t.offset);
    }
    return fail_unknown_word(t, called);
  }

  uint32_t fail_unknown_word(const Token& t, bool called) {
    std::vector<std::string_view> candidates;
    if (called) {
      for (const auto& f : all_functions()) candidates.push_back(f.name);
    } else {
      candidates.assign(KNOWN_NAMES.begin(), KNOWN_NAMES.end());
    }
    std::string_view suggestion = closest_name(t.source, candidates);
    std::string hint = suggestion.empty() ? "" : " (did you mean '" + std::string(suggestion) + "'?)";
    if (called) {
      return fail(t.offset, "unknown function " + describe_token(t) + hint + "; known functions: " +
                                known_function_names());
    }
    return fail(t.offset, "unknown name " + describe_token(t) + hint + "; known names: " +
                              std::string(KNOWN_NAMES_TEXT) + ", and metric(\"NAME\") for other metrics");
  }

  // tags.KEY | tags['KEY'] (and the same for meta)
  uint32_t parse_key_access(NodeKind kind) {
    const Token& word = advance();
    const Token& t = peek();
    if (is_symbol(t, ".") && peek(1).kind == TokenKind::identifier) {
      advance();
      const Token& key = advance();
      return add_leaf(kind, word.offset, 0.0, std::string(key.source));
    }
    if (is_symbol(t, "[")) {
      const Token& open = advance();
      if (peek().kind != TokenKind::string) {
        return fail(peek().offset, "expected the key as a quoted string after '" + std::string(word.source) +
                                       "[', found " + describe_token(peek()));
      }
      std::string key = advance().text;
      if (!is_symbol(peek(), "]")) {
        return fail(peek().offset, "expected ']' to close the '[' opened at " + column_of(open.offset) +
                                       ", found " + describe_token(peek()));
      }
      advance();
      return add_leaf(kind, word.offset, 0.0, std::move(key));
    }
    if (is_symbol(t, ".")) {
      return fail(peek(1).offset, "expected a key name after '" + std::string(word.source) + ".', found " +
                                      describe_token(peek(1)));
    }
    return fail(t.offset, "expected .KEY or [\"KEY\"] after '" + std::string(word.source) + "', found " +
                              describe_token(t));
  }

  // NAME '(' [conditional {',' conditional}] ')'
  uint32_t parse_call(const FunctionInfo& f) {
    const Token& name = advance();
    const Token& open = advance();
    Node call;
    call.kind = NodeKind::call;
    call.function = f.function;
    call.offset = name.offset;
    if (is_symbol(peek(), ")")) {
      advance();
    } else {
      while (true) {
        uint32_t arg = parse_conditional();
        if (arg == FAILED) return FAILED;
        call.children.push_back(arg);
        if (is_symbol(peek(), ",")) {
          advance();
          continue;
        }
        if (is_symbol(peek(), ")")) {
          advance();
          break;
        }
        std::string expected = call.children.size() >= f.max_args ? "expected ')' to close" : "expected ',' or ')' in";
        return fail(peek().offset, expected + " the call of " + std::string(f.name) + " opened at " +
                                       column_of(open.offset) + ", found " + describe_token(peek()));
      }
    }
    return finish_call(f, name, std::move(call));
  }

  uint32_t finish_call(const FunctionInfo& f, const Token& name, Node call) {
    const size_t n = call.children.size();
    if (n < f.min_args || n > f.max_args) {
      std::string count = f.min_args == f.max_args
                              ? std::to_string(f.min_args) + (f.min_args == 1 ? " argument" : " arguments")
                              : std::to_string(f.min_args) + " or " + std::to_string(f.max_args) + " arguments";
      return fail(name.offset, std::string(f.name) + " takes " + count + " (" + std::string(f.params) +
                                   "), found " + std::to_string(n));
    }
    if (f.function == Function::metric) {
      const Node& arg = program_.nodes[call.children[0]];
      if (arg.kind != NodeKind::string) {
        return fail(arg.offset, "metric() takes the metric name as a quoted string, e.g. "
                                "metric(\"policy/grad_norm\")");
      }
      call.text = arg.text;
      call.children.clear();
      program_.metrics.push_back(call.text);
      return add(std::move(call));
    }
    if (f.function != Function::has) {
      for (uint32_t c : call.children) {
        if (!check_numeric(c, "the argument of " + std::string(f.name))) return FAILED;
      }
    }
    if (f.function == Function::ewma) {
      const Node& alpha = program_.nodes[call.children[1]];
      if (alpha.kind == NodeKind::number && !(alpha.number > 0.0 && alpha.number <= 1.0)) {
        return fail(alpha.offset, "the alpha of ewma must be in (0, 1], found " + std::string(peek_source(alpha)));
      }
    }
    program_.uses_window_function = program_.uses_window_function || f.window;
    return add(std::move(call));
  }

  std::string_view peek_source(const Node& literal) const {
    for (const auto& t : tokens_) {
      if (t.offset == literal.offset) return t.source;
    }
    return {};
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  uint32_t nesting_ = 0;
  Program program_;
  std::optional<Error> error_;
};

}  // namespace

Result<Program> parse_program(std::string_view text) {
  auto tokens = tokenize(text);
  if (!tokens) return tokens.error();
  return Parser(text, std::move(tokens.value())).run();
}

}  // namespace rldk::rules
