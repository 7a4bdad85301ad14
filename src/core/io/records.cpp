#include "io/records.h"

#include <cmath>
#include <cstdio>

#include "io/time_parse.h"
#include "rldk/event.h"

namespace rldk::io {

namespace {
constexpr double MAX_EXACT_STEP = 9007199254740992.0;  // 2^53

std::string describe(const FlatRecord& record, const FlatField& field) {
  switch (field.kind) {
    case ValueKind::string: return "'" + std::string(record.str(field).substr(0, 40)) + "'";
    case ValueKind::null: return "null";
    case ValueKind::boolean: return field.number != 0 ? "true" : "false";
    case ValueKind::number: break;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", field.number);
  return buffer;
}
}  // namespace

bool step_from_number(double value, int64_t& step) {
  if (!std::isfinite(value) || std::fabs(value) > MAX_EXACT_STEP || std::floor(value) != value) return false;
  step = static_cast<int64_t>(value);
  return true;
}

FieldRole RecordInterpreter::role(std::string_view key) {
  // Keys repeat on every record: look each one up in the dictionary once.
  auto it = roles_.find(key);
  if (it != roles_.end()) return it->second;
  FieldRole r = context_.emitter.dictionary().role_of(key);
  roles_.emplace(role_keys_.emplace_back(key), r);
  return r;
}

bool RecordInterpreter::value_of(const FlatRecord& record, const FlatField& field, double& value) const {
  switch (field.kind) {
    case ValueKind::number:
    case ValueKind::boolean:
    case ValueKind::null:  // null is how orjson and TRL write a NaN: an observation, not a gap
      value = field.number;
      return true;
    case ValueKind::string:
      return parse_number(record.str(field), value);
  }
  return false;
}

double RecordInterpreter::time_of(const FlatRecord& record, const FlatField& field, uint64_t line) {
  double t = NO_TIME;
  if (field.kind == ValueKind::number && std::isfinite(field.number)) return epoch_seconds_from_number(field.number);
  if (field.kind == ValueKind::string) {
    std::string_view s = record.str(field);
    double number = 0;
    if (parse_iso8601(s, t)) return t;
    if (parse_number(s, number) && std::isfinite(number)) return epoch_seconds_from_number(number);
  }
  if (field.kind != ValueKind::null) {
    context_.diagnose("bad_time", line,
                      "time " + describe(record, field) + " is neither ISO-8601 nor epoch seconds; kept without time");
  }
  return NO_TIME;
}

bool RecordInterpreter::is_long_form(const FlatRecord& record) {
  bool name = false, value = false;
  for (const auto& f : record.fields) {
    if (f.depth != 0) continue;
    std::string_view key = record.key(f);
    if (key == "name") name = f.kind == ValueKind::string;
    else if (key == "value") value = true;
  }
  return name && value;
}

bool RecordInterpreter::is_verl(const FlatRecord& record) {
  bool any_data = false;
  for (const auto& f : record.fields) {
    std::string_view key = record.key(f);
    if (f.depth == 0) {
      if (role(key) != FieldRole::step) return false;
    } else if (key.substr(0, 5) == "data/") {
      any_data = true;
    } else {
      return false;
    }
  }
  return any_data;
}

std::optional<int64_t> RecordInterpreter::wide(const FlatRecord& record, uint64_t line,
                                               std::optional<int64_t> fallback_step, std::string_view strip_prefix) {
  const MetricDictionary& dict = context_.emitter.dictionary();
  // Pass 1: the step (best-priority step key), time and run id. Keys may come in any order (sorted JSON puts "step"
  // after most metrics), so they are found before any metric is emitted.
  int best_priority = -1;
  const FlatField* step_field = nullptr;
  const FlatField* time_field = nullptr;
  std::string_view run_id;
  field_roles_.clear();
  for (const auto& f : record.fields) {
    std::string_view key = record.key(f);
    FieldRole r = role(key);
    field_roles_.push_back(r);
    switch (r) {
      case FieldRole::step: {
        int p = dict.step_key_priority(key);
        if (step_field == nullptr || p < best_priority) {
          step_field = &f;
          best_priority = p;
        }
        break;
      }
      case FieldRole::time: time_field = &f; break;
      case FieldRole::run_id:
        if (f.kind == ValueKind::string) run_id = record.str(f);
        break;
      default: break;
    }
  }
  int64_t step = 0;
  if (step_field != nullptr) {
    double raw = 0;
    if (!value_of(record, *step_field, raw) || !step_from_number(raw, step)) {
      context_.diagnose("bad_step", line,
                        "step " + describe(record, *step_field) +
                            " is not an integer within +-2^53; record skipped");
      return std::nullopt;
    }
  } else if (fallback_step) {
    step = *fallback_step;
  } else {
    context_.diagnose("missing_step", line, "record has no step field; skipped");
    return std::nullopt;
  }
  double wall_time = time_field ? time_of(record, *time_field, line) : NO_TIME;
  // Pass 2: every metric.
  for (size_t i = 0; i < record.fields.size(); ++i) {
    const FlatField& f = record.fields[i];
    if (field_roles_[i] != FieldRole::metric) continue;
    std::string_view key = record.key(f);
    double value = 0;
    if (!value_of(record, f, value)) continue;  // text fields (phase names, notes) are not metrics
    if (!strip_prefix.empty() && key.substr(0, strip_prefix.size()) == strip_prefix) {
      key.remove_prefix(strip_prefix.size());
    }
    context_.emitter.emit(run_id, key, step, value, wall_time, line);
  }
  return step;
}

void RecordInterpreter::long_form(const FlatRecord& record, uint64_t line) {
  const FlatField* name = nullptr;
  const FlatField* value = nullptr;
  const FlatField* step = nullptr;
  const FlatField* time = nullptr;
  std::string_view run_id;
  for (const auto& f : record.fields) {
    if (f.depth != 0) continue;  // tags and meta are carried by EventWriter, not needed for series
    std::string_view key = record.key(f);
    if (key == "name") name = &f;
    else if (key == "value") value = &f;
    else if (key == "step") step = &f;
    else if (key == "time" || key == "wall_time" || key == "timestamp") time = &f;
    else if (key == "run_id" && f.kind == ValueKind::string) run_id = record.str(f);
  }
  std::string_view metric = record.str(*name);
  if (metric.empty()) {
    context_.diagnose("bad_event", line, "event has an empty name; skipped");
    return;
  }
  if (step == nullptr) {
    context_.diagnose("missing_step", line, "event '" + std::string(metric.substr(0, 60)) + "' has no step; skipped");
    return;
  }
  double raw_step = 0;
  int64_t s = 0;
  if (!value_of(record, *step, raw_step) || !step_from_number(raw_step, s)) {
    context_.diagnose("bad_step", line,
                      "step " + describe(record, *step) + " is not an integer within +-2^53; event skipped");
    return;
  }
  double v = 0;
  if (!value_of(record, *value, v)) {
    context_.diagnose("bad_value", line,
                      "value " + describe(record, *value) + " of '" + std::string(metric.substr(0, 60)) +
                          "' is not a number; event skipped");
    return;
  }
  double t = time ? time_of(record, *time, line) : NO_TIME;
  context_.emitter.emit(run_id, metric, s, v, t, line);
}

}  // namespace rldk::io
