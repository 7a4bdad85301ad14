// Whole JSON documents: HF/TRL trainer_state.json (log_history holds train, eval and summary entries), an object
// that keeps such a history under another name (a project's own export: `{"metadata": {...}, "raw_log_history":
// [...], ...}`), a JSON array of wide records, or a single wide object. These are small and rewritten in place by
// their writers, so they are collected and parsed at the end rather than line by line.
#include <algorithm>
#include <vector>

#include "io/column_table.h"
#include "io/line_format.h"
#include "io/source_files.h"
#include "model/json_text.h"

namespace rldk::io {
namespace {

constexpr size_t MAX_DOCUMENT_BYTES = size_t{1} << 31;

class DocumentFormat final : public LineFormat {
 public:
  explicit DocumentFormat(ReadContext& context) : context_(context), records_(context) {}

  void line(std::string_view text, uint64_t number) override {
    if (text_.size() + text.size() + 1 > MAX_DOCUMENT_BYTES) {
      if (!too_large_) context_.diagnose("document_too_large", number, "JSON document over 2 GiB; the rest is ignored");
      too_large_ = true;
      return;
    }
    line_starts_.push_back(text_.size());
    first_line_ = line_starts_.size() == 1 ? number : first_line_;
    text_.append(text);
    text_.push_back('\n');
  }

  // One document per file: the files of a run read as one (TensorBoard downloads of its tags) are parsed in turn.
  void end_file() override {
    if (line_starts_.empty()) return;
    finish();
    text_.clear();
    line_starts_.clear();
    tag_.clear();
    ++documents_;
  }

  void finish() override {
    if (line_starts_.empty() && documents_ > 0) return;
    LenientParser parser(text_);
    char c = parser.peek();
    if (c == '[') {
      kind_ = "array of records";
      parse_array(parser, "");
    } else if (c == '{') {
      parse_object(parser);
    } else {
      context_.diagnose("malformed_json", line_at(parser.offset()), "expected a JSON object or array");
      return;
    }
    if (!parser.error().message.empty()) fail_at(parser.error().offset, parser.error().message);
  }

  // Reports a structural error found outside the scanner; returns false so callers can `return fail_at(...)`.
  bool fail_at(size_t offset, const std::string& message) {
    context_.diagnose("malformed_json", line_at(offset),
                      "malformed JSON: " + message + "; entries before it were kept");
    return false;
  }

  std::string detail() const override {
    if (kind_ == "trainer_state" || kind_ == "history") {
      std::string what = kind_ == "history" ? "history under " + history_key_ : kind_;
      return "json document (" + what + ": " + std::to_string(train_) + " train, " + std::to_string(eval_) +
             " eval, " + std::to_string(summary_) + " summary entries)";
    }
    return "json document (" + kind_ + ")";
  }

 private:
  uint64_t line_at(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return first_line_ + static_cast<uint64_t>(it - line_starts_.begin()) - 1;
  }

  // Top-level object: trainer_state.json when it has log_history; an object with another member holding per-step
  // records (history_member); otherwise one wide record.
  bool parse_object(LenientParser& parser) {
    LenientParser probe(text_);
    history_key_ = text_.find("\"log_history\"") != std::string::npos ? "log_history" : history_member();
    bool has_history = !history_key_.empty();
    if (!has_history && read_column_table(text_, records_, context_, first_line_)) {
      kind_ = "column table";
      return true;
    }
    if (!has_history) {
      kind_ = "single record";
      record_.clear();
      if (probe.flat_object(record_)) {
        records_.wide(record_, first_line_, 0);
        return true;
      }
      parser = probe;  // report the error at its place
      return false;
    }
    kind_ = history_key_ == "log_history" ? "trainer_state" : "history";
    parser.consume('{');
    if (parser.consume('}')) return true;
    std::string key;
    for (;;) {
      if (!parser.string(key)) return false;
      if (!parser.consume(':')) return fail_at(parser.offset(), "expected ':' after a key");
      char c = parser.peek();
      if (key == history_key_ && c == '[') {
        if (!parse_array(parser, "log_history")) return false;
      } else if (c == '{' || c == '[') {
        if (!parser.skip_value()) return false;
      } else {
        FlatRecord scratch;
        ValueKind kind;
        double number = 0;
        std::string_view str;
        if (!parser.scalar(scratch, kind, number, str)) return false;
        if (kind == ValueKind::string) {
          context_.emitter.meta("", "trainer_state." + key, str);
        } else if (kind == ValueKind::number || kind == ValueKind::boolean) {
          context_.emitter.meta("", "trainer_state." + key, format_double(number));
        }
      }
      if (parser.consume(',')) continue;
      return parser.consume('}') || fail_at(parser.offset(), "expected ',' or '}'");
    }
  }

  // The top-level member that holds the run's history under a name of its own: an array whose first element is an
  // object with a `step` and at least one other number, the one whose first record has the most fields (a project's
  // export may keep single-metric series beside the full history). Empty when there is none. A document cut off
  // (a run killed while its writer rewrote the file) or broken further on still has the best member seen before the
  // break: parse_object then keeps that history's records up to the break and reports it there.
  std::string history_member() const {
    LenientParser parser(text_);
    if (!parser.consume('{') || parser.consume('}')) return {};
    std::string key, best;
    size_t best_fields = 0;
    FlatRecord first;
    for (;;) {
      if (!parser.string(key) || !parser.consume(':')) return best;
      if (parser.peek() == '[') {
        LenientParser look = parser;
        look.consume('[');
        first.clear();
        if (look.peek() == '{' && look.flat_object(first)) {
          bool has_step = false;
          for (const auto& f : first.fields) has_step = has_step || first.key(f) == "step";
          if (has_step && first.fields.size() >= 2 && first.fields.size() > best_fields) {
            best = key;
            best_fields = first.fields.size();
          }
        }
      }
      if (!parser.skip_value() || !parser.consume(',')) return best;
    }
  }

  bool parse_array(LenientParser& parser, std::string_view what) {
    parser.consume('[');
    if (parser.consume(']')) return true;
    int64_t index = 0;
    for (;;) {
      size_t at = parser.offset();
      parser.skip_space();
      at = parser.offset();
      if (parser.peek() == '{') {
        record_.clear();
        if (!parser.flat_object(record_)) return false;
        entry(line_at(at), index, what);
      } else if (what.empty() && parser.peek() == '[' && scalar_export_row(parser, line_at(at), index)) {
        if (tags_.empty() || tags_.back() != tag_) tags_.push_back(tag_);
        kind_ = tags_.size() == 1 ? "TensorBoard scalar export: " + tag_
                                  : "TensorBoard scalar exports: " + std::to_string(tags_.size()) + " tags";
      } else if (!parser.skip_value()) {
        return false;
      }
      ++index;
      if (parser.consume(',')) continue;
      return parser.consume(']') || fail_at(parser.offset(), "expected ',' or ']'");
    }
  }

  // A row of TensorBoard's scalar download as JSON, [wall_time, step, value]: the value is the tag's, named by the
  // file (run-<run>-tag-<tag>.json). False (cursor unmoved) for any other list.
  bool scalar_export_row(LenientParser& parser, uint64_t line, int64_t index) {
    LenientParser look = parser;
    look.consume('[');
    double row[3];
    for (int i = 0; i < 3; ++i) {
      FlatRecord scratch;
      ValueKind kind;
      std::string_view str;
      if ((i > 0 && !look.consume(',')) || !look.scalar(scratch, kind, row[i], str) || kind != ValueKind::number) {
        return false;
      }
    }
    if (!look.consume(']')) return false;
    parser = look;
    if (tag_.empty()) tag_ = tensorboard_export_tag(context_.file);
    record_.clear();
    append_number(record_, "wall_time", row[0]);
    append_number(record_, "step", row[1]);
    append_number(record_, tag_, row[2]);
    records_.wide(record_, line, index);
    return true;
  }

  void entry(uint64_t line, int64_t index, std::string_view what) {
    if (what == "log_history") {
      bool eval = false, summary = false;
      for (const auto& f : record_.fields) {
        std::string_view key = record_.key(f);
        eval = eval || key.substr(0, 5) == "eval_";
        summary = summary || key == "train_runtime";
      }
      (summary ? summary_ : eval ? eval_ : train_) += 1;
      // Entries without a step (hand-edited files) follow the previous one.
      auto step = records_.wide(record_, line, last_step_);
      if (step) last_step_ = *step;
    } else {
      records_.wide(record_, line, index);
    }
  }

  ReadContext& context_;
  RecordInterpreter records_;
  FlatRecord record_;
  std::string text_;
  std::vector<size_t> line_starts_;
  uint64_t first_line_ = 1;
  bool too_large_ = false;
  std::string kind_ = "empty";
  std::string history_key_;  // the member holding the per-step records ("log_history" in trainer_state.json)
  std::string tag_;          // a TensorBoard scalar download's tag
  uint64_t documents_ = 0;   // documents of earlier files, already parsed
  std::vector<std::string> tags_;
  uint64_t train_ = 0, eval_ = 0, summary_ = 0;
  std::optional<int64_t> last_step_;
};

}  // namespace

std::unique_ptr<LineFormat> make_document_format(ReadContext& context) {
  return std::make_unique<DocumentFormat>(context);
}

}  // namespace rldk::io
