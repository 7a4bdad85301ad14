// JSON Lines: long-form events, wide records and verl's file logger, decided per line (files mix them rarely, but
// deciding per line costs nothing and never misreads a file whose first line is unusual).
#include <algorithm>
#include <array>

#include "io/column_table.h"
#include "io/line_format.h"

namespace rldk::io {
namespace {

class JsonlFormat final : public LineFormat {
 public:
  explicit JsonlFormat(ReadContext& context) : context_(context), records_(context) {}

  // Objects written back to back on one line ({"step": 1, ...}{"step": 2, ...}: a logger that forgot its "\n", two
  // writers appending to one file) are one record each, in order. After the first, each is parsed from a window a
  // few times the size of the one before (doubled when it ends inside an object), so a whole run written as one
  // line is read in time proportional to its length, not copied once per record.
  void line(std::string_view text, uint64_t number) override {
    if (is_blank(text)) return;
    size_t consumed = 0, window = text.size();
    for (;;) {
      std::string_view piece = text.substr(0, window);
      bool cut = piece.size() < text.size();
      ParseError error;
      bool ok = parse_flat_object(piece, record_, error);
      if (!ok && !error.trailing_text && cut) {
        window *= 2;
        continue;
      }
      size_t end = ok ? piece.size() : error.offset;
      if (!ok && !(error.trailing_text && text[end] == '{')) {
        context_.diagnose("malformed_json", number,
                          "malformed JSON at column " + std::to_string(consumed + error.offset + 1) + ": " +
                              error.message);
        return;
      }
      if (!column_table(text.substr(0, end), number)) record(number);
      if (ok && !cut) return;
      text.remove_prefix(end);
      consumed += end;
      if (is_blank(text)) return;
      window = std::max<size_t>(4 * end, MIN_WINDOW);
    }
  }

  std::string detail() const override {
    std::string out;
    for (size_t kind = 0; kind < kinds_.size(); ++kind) {
      if (kinds_[kind] > 0) out += (out.empty() ? "" : ", ") + std::string(KIND_NAMES[kind]);
    }
    return "jsonl (" + (out.empty() ? std::string("no records") : out) + ")";
  }

 private:
  static constexpr size_t MIN_WINDOW = 4096;

  void record(uint64_t number) {
    if (records_.long_form_if_event(record_, number)) {
      ++kinds_[LONG_FORM];
    } else if (records_.is_verl(record_)) {
      ++kinds_[VERL];
      records_.wide(record_, number, std::nullopt, "data/");
    } else {
      ++kinds_[WIDE];
      // Wide records without a step are numbered in order, unless the file's other records carry steps: then a
      // record without one (a rollout summary between training records) belongs to the last step logged.
      auto step = records_.wide(record_, number, seen_step_ ? last_step_ : next_index_);
      if (step && records_.last_had_step()) {
        seen_step_ = true;
        last_step_ = *step;
      } else if (step && !seen_step_) {
        ++next_index_;
      }
    }
  }

  // A whole run dumped by column on one line ({"step": [...], "loss": [...]}: json.dump of a dict of lists, pandas'
  // to_json): no number of its own, only lists or nested objects. A line with numbers beside a list is a record.
  bool column_table(std::string_view object, uint64_t number) {
    bool candidate = record_.skipped_lists > 0;
    for (const auto& f : record_.fields) {
      if (f.depth == 0 && (f.kind == ValueKind::number || f.kind == ValueKind::boolean)) return false;
      candidate = candidate || f.depth > 0;
    }
    if (!candidate || !read_column_table(object, records_, context_, number)) return false;
    ++kinds_[COLUMNS];
    return true;
  }

  // Counted per line, so plain counters rather than a map keyed by name. Listed in detail() in this (alphabetical)
  // order.
  enum Kind : size_t { COLUMNS, LONG_FORM, VERL, WIDE };
  static constexpr const char* KIND_NAMES[] = {"column table", "long-form events", "verl file logger", "wide records"};

  static bool is_blank(std::string_view s) {
    for (char c : s) {
      if (c != ' ' && c != '\t' && c != '\r') return false;
    }
    return true;
  }

  ReadContext& context_;
  RecordInterpreter records_;
  FlatRecord record_;
  std::array<uint64_t, 4> kinds_{};
  int64_t next_index_ = 0;
  bool seen_step_ = false;  // a record with its own step field has been read
  int64_t last_step_ = 0;
};

}  // namespace

std::unique_ptr<LineFormat> make_jsonl_format(ReadContext& context) { return std::make_unique<JsonlFormat>(context); }

}  // namespace rldk::io
