// A value while an expression is being evaluated. Unlike the public Value it borrows what it can: strings point into
// the parsed program or the context, and `value` is a view of the context's window, so `mean(value) > 0.6` copies
// nothing. Only element-wise results own storage. Move-only, because a vector result's view points into its own
// storage (a moved std::vector keeps its buffer, a copied one would not). Results as long as a typical window are
// stored inline, so `value > 0.35` over a window of 5 allocates nothing; a move re-points the view at the new copy.
#pragma once

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "rldk/expression.h"

namespace rldk::rules {

class Operand {
 public:
  using Kind = Value::Kind;

  static constexpr size_t INLINE = 8;

  Operand() = default;  // missing
  Operand(Operand&& o) noexcept { take(std::move(o)); }
  Operand& operator=(Operand&& o) noexcept {
    if (this != &o) take(std::move(o));
    return *this;
  }
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  ~Operand() = default;

  static Operand boolean(bool b) { return scalar(Kind::boolean, b ? 1.0 : 0.0); }
  static Operand number(double x) { return scalar(Kind::number, x); }
  static Operand string(std::string_view text) {
    Operand o;
    o.kind_ = Kind::string;
    o.text_ = text;
    return o;
  }
  // A vector borrowing `elements` (which must outlive the evaluation).
  static Operand view(Kind kind, std::span<const double> elements) {
    Operand o;
    o.kind_ = kind;
    o.elements_ = elements;
    return o;
  }
  static Operand vector(Kind kind, std::vector<double> elements) {
    Operand o;
    o.kind_ = kind;
    o.owned_ = std::move(elements);
    o.elements_ = o.owned_;
    return o;
  }
  // A vector of `n` elements to be written through data() (inline when short).
  static Operand sized(Kind kind, size_t n) {
    Operand o;
    o.kind_ = kind;
    if (n <= INLINE) {
      o.elements_ = {o.inline_, n};
    } else {
      o.owned_.resize(n);
      o.elements_ = o.owned_;
    }
    return o;
  }
  // The storage of a sized() vector.
  double* data() { return const_cast<double*>(elements_.data()); }

  // Scalars of a boolean or number kind; vectors of the matching element kind.
  static Operand of_kind(bool boolean, double x) { return boolean ? Operand::boolean(x != 0.0) : number(x); }

  Kind kind() const { return kind_; }
  bool is_missing() const { return kind_ == Kind::missing; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_vector() const { return kind_ == Kind::booleans || kind_ == Kind::numbers; }
  // Booleans, numbers, and vectors of them.
  bool is_numeric() const { return !is_missing() && !is_string(); }
  bool is_boolean_kind() const { return kind_ == Kind::boolean || kind_ == Kind::booleans; }
  double scalar() const { return scalar_; }
  std::string_view text() const { return text_; }
  // Elements of a vector; for a scalar, a one-element view of the scalar itself (valid while this Operand lives).
  std::span<const double> elements() const { return is_vector() ? elements_ : std::span<const double>(&scalar_, 1); }
  size_t length() const { return is_vector() ? elements_.size() : 1; }
  // Element i of a vector, or the scalar (broadcasting).
  double at(size_t i) const { return is_vector() ? elements_[i] : scalar_; }

  // The public form; a vector this Operand owns is moved, not copied.
  Value to_value() &&;

 private:
  static Operand scalar(Kind kind, double x) {
    Operand o;
    o.kind_ = kind;
    o.scalar_ = x;
    return o;
  }

  void take(Operand&& o) {
    kind_ = o.kind_;
    scalar_ = o.scalar_;
    text_ = o.text_;
    if (o.elements_.data() == o.inline_) {
      std::copy(o.inline_, o.inline_ + o.elements_.size(), inline_);
      elements_ = {inline_, o.elements_.size()};
      owned_.clear();
    } else {
      owned_ = std::move(o.owned_);  // a moved vector keeps its buffer, so a view of it stays valid
      elements_ = o.elements_;
    }
  }

  Kind kind_ = Kind::missing;
  double scalar_ = 0.0;
  std::string_view text_;
  std::span<const double> elements_;
  std::vector<double> owned_;
  double inline_[INLINE];
};

}  // namespace rldk::rules
