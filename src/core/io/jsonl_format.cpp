// JSON Lines: long-form events, wide records and verl's file logger, decided per line (files mix them rarely, but
// deciding per line costs nothing and never misreads a file whose first line is unusual).
#include <map>

#include "io/line_format.h"

namespace rldk::io {
namespace {

class JsonlFormat final : public LineFormat {
 public:
  explicit JsonlFormat(ReadContext& context) : context_(context), records_(context) {}

  void line(std::string_view text, uint64_t number) override {
    if (is_blank(text)) return;
    ParseError error;
    if (!parse_flat_object(text, record_, error)) {
      context_.diagnose("malformed_json", number,
                        "malformed JSON at column " + std::to_string(error.offset + 1) + ": " + error.message);
      return;
    }
    if (RecordInterpreter::is_long_form(record_)) {
      ++kinds_["long-form events"];
      records_.long_form(record_, number);
    } else if (records_.is_verl(record_)) {
      ++kinds_["verl file logger"];
      records_.wide(record_, number, std::nullopt, "data/");
    } else {
      ++kinds_["wide records"];
      // Wide records without a step are numbered in order.
      if (records_.wide(record_, number, next_index_)) ++next_index_;
    }
  }

  std::string detail() const override {
    std::string out;
    for (const auto& [kind, count] : kinds_) out += (out.empty() ? "" : ", ") + kind;
    return "jsonl (" + (out.empty() ? std::string("no records") : out) + ")";
  }

 private:
  static bool is_blank(std::string_view s) {
    for (char c : s) {
      if (c != ' ' && c != '\t' && c != '\r') return false;
    }
    return true;
  }

  ReadContext& context_;
  RecordInterpreter records_;
  FlatRecord record_;
  std::map<std::string, uint64_t> kinds_;
  int64_t next_index_ = 0;
};

}  // namespace

std::unique_ptr<LineFormat> make_jsonl_format(ReadContext& context) { return std::make_unique<JsonlFormat>(context); }

}  // namespace rldk::io
