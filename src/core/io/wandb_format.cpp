// W&B transaction logs (run-<id>.wandb, written by offline and online runs alike): WandbFramer records holding
// `Record` protos (wandb/proto/wandb_internal.proto). What becomes of each record kind:
//  - history (wandb.log): one point per numeric item; value_json is W&B's extended JSON, so NaN, Infinity and
//    -Infinity are values; non-numeric items (media, tables, strings, booleans) are skipped;
//  - config, summary (their own records, or inside the run record): meta entries "config.<key>" and
//    "summary.<key>" holding the value's JSON text;
//  - run: meta wandb_run_id, wandb_project, wandb_entity, wandb_display_name; exit: meta wandb_exit_code.
// Step and wall time as io/wandb_history.h says (its fallback here: the record's HistoryStep.num).
#include <algorithm>
#include <charconv>
#include <optional>
#include <cmath>
#include <string>
#include <vector>

#include "io/protobuf_wire.h"
#include "io/record_format.h"
#include "io/wandb_framing.h"
#include "io/wandb_history.h"

namespace rldk::io {
namespace {

namespace record {
constexpr uint32_t HISTORY = 2, SUMMARY = 3, CONFIG = 5, RUN = 17, EXIT = 18;
}
namespace history {
constexpr uint32_t ITEM = 1, STEP = 2, STEP_NUM = 1;
}
namespace item {  // HistoryItem, SummaryItem and ConfigItem share these numbers
constexpr uint32_t KEY = 1, NESTED_KEY = 2, VALUE_JSON = 16;
}
namespace update {  // SummaryRecord and ConfigRecord
constexpr uint32_t UPDATE = 1;
}
namespace run {
constexpr uint32_t RUN_ID = 1, ENTITY = 2, PROJECT = 3, CONFIG = 4, SUMMARY = 5, DISPLAY_NAME = 8;
}
namespace run_exit {
constexpr uint32_t EXIT_CODE = 1;
}

struct Item {
  std::string key;
  std::string_view value_json;
};

// key, or the nested keys joined with '.' (how W&B itself names nested values).
bool parse_item(std::string_view bytes, Item& out) {
  out.key.clear();
  out.value_json = {};
  std::string nested;
  pb::Reader r(bytes);
  pb::Field f;
  while (r.next(f)) {
    if (f.type != pb::WireType::bytes) continue;
    if (f.number == item::KEY) out.key.assign(f.bytes);
    else if (f.number == item::NESTED_KEY) {
      if (!nested.empty()) nested += '.';
      nested.append(f.bytes);
    } else if (f.number == item::VALUE_JSON) {
      out.value_json = f.bytes;
    }
  }
  if (out.key.empty()) out.key = std::move(nested);
  return r.ok();
}

// A JSON number, or W&B's NaN / Infinity / -Infinity. Anything else (strings, objects, booleans) is not a value.
bool json_number(std::string_view text, double& value) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  if (text == "NaN") value = NAN;
  else if (text == "Infinity") value = INFINITY;
  else if (text == "-Infinity") value = -INFINITY;
  else {
    if (text.empty() || !(text.front() == '-' || (text.front() >= '0' && text.front() <= '9'))) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return false;
  }
  return true;
}

class WandbFormat final : public RecordFormat {
 public:
  explicit WandbFormat(ReadContext& context)
      : context_(context),
        framer_(context, [this](std::string_view data, uint64_t index, uint64_t offset) {
          on_record(data, index, offset);
        }) {}

  void feed(std::string_view bytes) override { framer_.feed(bytes); }
  void end_file() override { framer_.next_file(); }
  void finish() override { framer_.finish(); }
  uint64_t records() const override { return framer_.records(); }
  std::string detail() const override {
    std::string d = "wandb (" + std::to_string(framer_.records()) + " records, " + std::to_string(history_rows_) +
                    " history rows";
    d += "; step from " + steps_.source();
    return d + ")";
  }

 private:
  void on_record(std::string_view data, uint64_t index, uint64_t offset) {
    pb::Reader r(data);
    pb::Field f;
    std::string_view body;
    uint32_t kind = 0;
    while (r.next(f)) {
      if (f.type != pb::WireType::bytes) continue;
      if (f.number == record::HISTORY || f.number == record::SUMMARY || f.number == record::CONFIG ||
          f.number == record::RUN || f.number == record::EXIT) {
        kind = f.number;
        body = f.bytes;
      }
    }
    if (!r.ok()) {
      bad(index, offset, "the record is not a valid Record message");
      return;
    }
    bool ok = true;
    switch (kind) {
      case record::HISTORY: ok = history_record(body, index); break;
      case record::SUMMARY: ok = item_updates(body, "summary."); break;
      case record::CONFIG: ok = item_updates(body, "config."); break;
      case record::RUN: ok = run_record(body); break;
      case record::EXIT: ok = exit_record(body); break;
      default: break;
    }
    if (!ok) bad(index, offset, "a malformed field in its body");
  }

  bool history_record(std::string_view body, uint64_t index) {
    items_.clear();
    int64_t step_num = 0;
    bool has_step_num = false;
    pb::Reader r(body);
    pb::Field f;
    while (r.next(f)) {
      if (f.number == history::ITEM && f.type == pb::WireType::bytes) {
        Item it;
        if (!parse_item(f.bytes, it)) return false;
        items_.push_back(std::move(it));
      } else if (f.number == history::STEP && f.type == pb::WireType::bytes) {
        pb::Reader s(f.bytes);
        pb::Field n;
        while (s.next(n)) {
          if (n.number == history::STEP_NUM && n.type == pb::WireType::varint) {
            step_num = n.as_int64();
            has_step_num = true;
          }
        }
      }
    }
    if (!r.ok()) return false;
    ++history_rows_;
    numbers_.clear();
    for (const Item& it : items_) {
      double v = 0.0;
      if (json_number(it.value_json, v)) numbers_.push_back({it.key, v});
    }
    double wall_time = NAN;
    int64_t step = steps_.step(numbers_, has_step_num ? std::optional<int64_t>(step_num) : std::nullopt, wall_time);
    // Two names for one metric in one row (TRL logs completion_length and completions/mean_length): one point,
    // the first name's, as for every record-shaped log (RecordInterpreter::wide).
    row_metrics_.clear();
    for (const WandbItem& it : numbers_) {
      if (!steps_.is_metric(it.key)) continue;
      std::string canonical = context_.emitter.dictionary().canonical_name(it.key);
      if (std::find(row_metrics_.begin(), row_metrics_.end(), canonical) != row_metrics_.end()) continue;
      row_metrics_.push_back(std::move(canonical));
      context_.emitter.emit({}, it.key, step, it.value, wall_time, index);
    }
    return true;
  }

  bool item_updates(std::string_view body, const char* prefix) {
    pb::Reader r(body);
    pb::Field f;
    while (r.next(f)) {
      if (f.number != update::UPDATE || f.type != pb::WireType::bytes) continue;
      Item it;
      if (!parse_item(f.bytes, it)) return false;
      if (it.key.empty() || it.key.front() == '_') continue;
      context_.emitter.meta({}, prefix + it.key, it.value_json);
    }
    return r.ok();
  }

  bool run_record(std::string_view body) {
    pb::Reader r(body);
    pb::Field f;
    bool ok = true;
    while (r.next(f)) {
      if (f.type != pb::WireType::bytes || f.bytes.empty()) continue;
      switch (f.number) {
        // The run's initial config and summary travel inside the run record (later changes in their own records).
        case run::CONFIG: ok = item_updates(f.bytes, "config.") && ok; break;
        case run::SUMMARY: ok = item_updates(f.bytes, "summary.") && ok; break;
        case run::RUN_ID: context_.emitter.meta({}, "wandb_run_id", f.bytes); break;
        case run::ENTITY: context_.emitter.meta({}, "wandb_entity", f.bytes); break;
        case run::PROJECT: context_.emitter.meta({}, "wandb_project", f.bytes); break;
        case run::DISPLAY_NAME: context_.emitter.meta({}, "wandb_display_name", f.bytes); break;
        default: break;
      }
    }
    return r.ok() && ok;
  }

  bool exit_record(std::string_view body) {
    pb::Reader r(body);
    pb::Field f;
    while (r.next(f)) {
      if (f.number == run_exit::EXIT_CODE && f.type == pb::WireType::varint) {
        context_.emitter.meta({}, "wandb_exit_code", std::to_string(static_cast<int32_t>(f.varint)));
      }
    }
    return r.ok();
  }

  void bad(uint64_t index, uint64_t offset, const std::string& why) {
    context_.diagnose("wandb_bad_record", 0,
                      "record " + std::to_string(index) + " at byte " + std::to_string(offset) + ": " + why +
                          "; skipped");
  }

  ReadContext& context_;
  WandbFramer framer_;
  std::vector<Item> items_;
  std::vector<WandbItem> numbers_;  // the row's numeric items
  std::vector<std::string> row_metrics_;  // canonical names the row has given a point
  WandbRowSteps steps_{context_.emitter.dictionary()};
  uint64_t history_rows_ = 0;
};

}  // namespace

std::unique_ptr<RecordFormat> make_wandb_format(ReadContext& context) { return std::make_unique<WandbFormat>(context); }

}  // namespace rldk::io
