// A small JSON value for machine-readable outputs. Objects keep keys sorted and numbers print in their shortest
// round-trip form, so outputs are byte-stable and golden files do not churn. Non-finite numbers print as the
// strings "NaN", "Infinity" and "-Infinity" (strict JSON has no token for them; dropping them would hide findings).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace rldk {

class Json {
 public:
  using Object = std::map<std::string, Json>;
  using Array = std::vector<Json>;

  Json() = default;
  Json(std::nullptr_t) {}            // NOLINT(google-explicit-constructor): values convert implicitly by design
  Json(bool v) : value_(v) {}        // NOLINT(google-explicit-constructor)
  Json(double v) : value_(v) {}      // NOLINT(google-explicit-constructor)
  Json(int v) : value_(static_cast<int64_t>(v)) {}  // NOLINT(google-explicit-constructor)
  Json(int64_t v) : value_(v) {}     // NOLINT(google-explicit-constructor)
  Json(uint64_t v) : value_(v) {}    // NOLINT(google-explicit-constructor)
  Json(uint32_t v) : value_(static_cast<int64_t>(v)) {}  // NOLINT(google-explicit-constructor)
  Json(std::string v) : value_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  Json(const char* v) : value_(std::string(v)) {}  // NOLINT(google-explicit-constructor)
  Json(Object v) : value_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  Json(Array v) : value_(std::move(v)) {}   // NOLINT(google-explicit-constructor)

  // Object access; a null value becomes an empty object.
  Json& operator[](const std::string& key);
  // Array append; a null value becomes an empty array.
  void push_back(Json value);

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(value_); }

  // indent < 0: one line. Otherwise pretty-printed with that many spaces.
  std::string dump(int indent = 2) const;
  // Appends the value as it prints at nesting `level`: for writers that stream a large document piece by piece.
  void dump_to(std::string& out, int indent, int level) const;

 private:
  std::variant<std::nullptr_t, bool, double, int64_t, uint64_t, std::string, Object, Array> value_;
};

}  // namespace rldk
