// Element-wise building blocks of evaluation: coercion, truthiness, broadcasting arithmetic and comparison. A scalar
// combined with a vector applies to every element; two vectors (both come from the same window) pair up element by
// element.
#pragma once

#include <algorithm>
#include <vector>

#include "rules/ast.h"
#include "rules/operand.h"

namespace rldk::rules {

// Strings become numbers when their whole text is one ("0.3", " 1e-3 ", "nan", "true"); tags and meta are strings,
// and `value > meta.threshold` should work. A string that is not a number becomes missing; other kinds pass.
Operand to_numeric(Operand a);

// Element-wise truthiness as booleans: numbers are true unless 0 or NaN, strings unless empty, missing is false.
Operand truth(Operand a);

// Python's modulo: the result takes the sign of the divisor; x % 0 is NaN.
double python_modulo(double x, double y);

// Arithmetic on two numeric operands (see NodeKind add .. power); missing when either is missing or not a number.
Operand arithmetic(NodeKind kind, Operand a, Operand b);

// One comparison of two numbers (not in/not_in); IEEE for NaN (only != holds).
bool compare_numbers(CompareOp op, double a, double b);

// One comparison (not in/not_in): false when either side is missing; IEEE for NaN (only != holds).
Operand compare(CompareOp op, const Operand& a, const Operand& b);

// Element-wise and / or of two truth values.
Operand logical(bool is_and, const Operand& a, const Operand& b);

// Applies f to every element of a numeric operand; the result is boolean-kinded when `to_boolean`.
template <class F>
Operand map_elements(const Operand& a, bool to_boolean, F f) {
  if (!a.is_vector()) return Operand::of_kind(to_boolean, f(a.scalar()));
  auto in = a.elements();
  Operand out = Operand::sized(to_boolean ? Operand::Kind::booleans : Operand::Kind::numbers, in.size());
  double* o = out.data();
  for (size_t i = 0; i < in.size(); ++i) o[i] = static_cast<double>(f(in[i]));
  return out;
}

// Applies f pairwise, broadcasting a scalar against a vector.
template <class F>
Operand zip_elements(const Operand& a, const Operand& b, bool to_boolean, F f) {
  if (!a.is_vector() && !b.is_vector()) return Operand::of_kind(to_boolean, f(a.scalar(), b.scalar()));
  size_t n = a.is_vector() && b.is_vector() ? std::min(a.length(), b.length())
                                             : (a.is_vector() ? a.length() : b.length());
  Operand out = Operand::sized(to_boolean ? Operand::Kind::booleans : Operand::Kind::numbers, n);
  double* o = out.data();
  for (size_t i = 0; i < n; ++i) o[i] = static_cast<double>(f(a.at(i), b.at(i)));
  return out;
}

}  // namespace rldk::rules
