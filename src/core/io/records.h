// Interpreting parsed records: a wide record (one step, many metrics: wide JSONL, verl, CSV rows, console dicts,
// trainer_state entries) or a long-form event (one metric per line). Shared by every format so that step, time and
// run-id fields, numeric strings and non-finite values are handled the same way everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <deque>
#include <unordered_map>
#include <vector>

#include "io/lenient_json.h"
#include "io/point_emitter.h"
#include "rldk/diagnostics.h"

namespace rldk::io {

struct ReadContext {
  PointEmitter& emitter;
  Diagnostics& diagnostics;
  std::string file;

  void diagnose(std::string kind, uint64_t line, std::string message) {
    diagnostics.add(Diagnostic{std::move(kind), file, line, std::move(message)});
  }
};

// Converts a logged step to an integer: finite, integral and within +-2^53 (beyond that doubles skip integers).
bool step_from_number(double value, int64_t& step);

class RecordInterpreter {
 public:
  explicit RecordInterpreter(ReadContext& context) : context_(context) {}

  // Emits a wide record. Without a step field the record gets `fallback_step`; without either it is reported and
  // skipped. `strip_prefix` (e.g. "data/" for verl's file logger) is removed from metric keys. Returns the step used.
  std::optional<int64_t> wide(const FlatRecord& record, uint64_t line, std::optional<int64_t> fallback_step,
                              std::string_view strip_prefix = {});
  // Emits a long-form event {"time","step","name","value","run_id","tags","meta"}.
  void long_form(const FlatRecord& record, uint64_t line);

  // True when the record looks like a long-form event (top-level string "name" and a "value").
  static bool is_long_form(const FlatRecord& record);
  // True when every metric sits under a top-level "data" object, as verl's file logger writes.
  bool is_verl(const FlatRecord& record);

  FieldRole role(std::string_view key);

 private:
  bool value_of(const FlatRecord& record, const FlatField& field, double& value) const;
  double time_of(const FlatRecord& record, const FlatField& field, uint64_t line);

  ReadContext& context_;
  std::deque<std::string> role_keys_;  // owns the keys of roles_
  std::unordered_map<std::string_view, FieldRole> roles_;
  std::vector<FieldRole> field_roles_;  // per field of the record being interpreted
};

}  // namespace rldk::io
