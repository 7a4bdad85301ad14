#include "rldk/json.h"

#include <cmath>

#include "model/json_text.h"

namespace rldk {

Json& Json::operator[](const std::string& key) {
  if (std::holds_alternative<std::nullptr_t>(value_)) value_ = Object{};
  return std::get<Object>(value_)[key];
}

void Json::push_back(Json value) {
  if (std::holds_alternative<std::nullptr_t>(value_)) value_ = Array{};
  std::get<Array>(value_).push_back(std::move(value));
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  if (indent >= 0) out.push_back('\n');
  return out;
}

void Json::dump_to(std::string& out, int indent, int level) const {
  auto newline = [&](int lvl) {
    if (indent < 0) return;
    out.push_back('\n');
    out.append(static_cast<size_t>(indent * lvl), ' ');
  };
  if (std::holds_alternative<std::nullptr_t>(value_)) {
    out += "null";
  } else if (const bool* b = std::get_if<bool>(&value_)) {
    out += *b ? "true" : "false";
  } else if (const double* d = std::get_if<double>(&value_)) {
    if (std::isfinite(*d)) {
      append_double(out, *d);
    } else {
      out.push_back('"');
      append_double(out, *d);
      out.push_back('"');
    }
  } else if (const int64_t* i = std::get_if<int64_t>(&value_)) {
    out += std::to_string(*i);
  } else if (const uint64_t* u = std::get_if<uint64_t>(&value_)) {
    out += std::to_string(*u);
  } else if (const std::string* s = std::get_if<std::string>(&value_)) {
    append_json_string(out, *s);
  } else if (const Object* o = std::get_if<Object>(&value_)) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out.push_back('{');
    bool first = true;
    for (const auto& [key, value] : *o) {
      if (!first) out.push_back(',');
      first = false;
      newline(level + 1);
      append_json_string(out, key);
      out += indent < 0 ? ":" : ": ";
      value.dump_to(out, indent, level + 1);
    }
    newline(level);
    out.push_back('}');
  } else if (const Array* a = std::get_if<Array>(&value_)) {
    if (a->empty()) {
      out += "[]";
      return;
    }
    out.push_back('[');
    bool first = true;
    for (const auto& value : *a) {
      if (!first) out.push_back(',');
      first = false;
      newline(level + 1);
      value.dump_to(out, indent, level + 1);
    }
    newline(level);
    out.push_back(']');
  }
}

}  // namespace rldk
