// CSV/TSV with a header row (stable-baselines3 progress.csv, Lightning CSVLogger metrics.csv, exported tables).
// Writers that discover new keys rewrite the header; when a row looks like a header again (no numeric cell and the
// step column or most names repeat) it replaces the current header instead of being read as data.
#include <algorithm>

#include "io/line_format.h"

namespace rldk::io {
namespace {

class CsvFormat final : public LineFormat {
 public:
  CsvFormat(ReadContext& context, char delimiter) : context_(context), records_(context), delimiter_(delimiter) {}

  void line(std::string_view text, uint64_t number) override {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.empty()) return;
    if (!split(text, number)) return;
    if (header_.empty() || looks_like_header()) {
      if (!header_.empty()) ++header_changes_;
      header_.clear();
      for (const auto& c : cells_) header_.emplace_back(trim(c));
      return;
    }
    if (cells_.size() != header_.size()) {
      context_.diagnose("csv_width", number,
                        "row has " + std::to_string(cells_.size()) + " cells but the header has " +
                            std::to_string(header_.size()) + "; extra cells ignored, missing ones left empty");
    }
    record_.clear();
    for (size_t i = 0; i < std::min(cells_.size(), header_.size()); ++i) {
      std::string_view cell = trim(cells_[i]);
      if (cell.empty()) continue;  // sparse rows: a missing value, not a NaN
      FlatField f{};
      f.key_begin = static_cast<uint32_t>(record_.arena.size());
      record_.arena.append(header_[i]);
      f.key_len = static_cast<uint32_t>(header_[i].size());
      f.str_begin = static_cast<uint32_t>(record_.arena.size());
      record_.arena.append(cell);
      f.str_len = static_cast<uint32_t>(cell.size());
      f.kind = ValueKind::string;  // numeric strings become values in the interpreter
      record_.fields.push_back(f);
    }
    if (records_.wide(record_, number, row_index_)) ++row_index_;
  }

  std::string detail() const override {
    std::string out = delimiter_ == '\t' ? "tsv" : "csv";
    if (header_changes_ > 0) out += " (header changed " + std::to_string(header_changes_) + (header_changes_ == 1 ? " time)" : " times)");
    return out;
  }

 private:
  static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  }

  // Splits a row into cells, honouring double quotes ("a,b" and "" escapes). A row whose quote never closes is
  // reported (fields spanning lines are not supported).
  bool split(std::string_view text, uint64_t number) {
    cells_.clear();
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (quoted) {
        if (c == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            cell.push_back('"');
            ++i;
          } else {
            quoted = false;
          }
        } else {
          cell.push_back(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == delimiter_) {
        cells_.push_back(std::move(cell));
        cell.clear();
      } else {
        cell.push_back(c);
      }
    }
    if (quoted) {
      context_.diagnose("csv_quote", number, "unterminated quoted cell; row skipped");
      return false;
    }
    cells_.push_back(std::move(cell));
    return true;
  }

  bool looks_like_header() const {
    size_t names = 0, repeated = 0;
    for (const auto& c : cells_) {
      std::string_view cell = trim(c);
      if (cell.empty()) continue;
      double ignored = 0;
      if (parse_number(cell, ignored)) return false;
      ++names;
      repeated += std::find(header_.begin(), header_.end(), std::string(cell)) != header_.end();
    }
    return names > 0 && repeated * 2 >= names;
  }

  ReadContext& context_;
  RecordInterpreter records_;
  char delimiter_;
  std::vector<std::string> header_;
  std::vector<std::string> cells_;
  FlatRecord record_;
  int64_t row_index_ = 0;
  uint64_t header_changes_ = 0;
};

}  // namespace

std::unique_ptr<LineFormat> make_csv_format(ReadContext& context, char delimiter) {
  return std::make_unique<CsvFormat>(context, delimiter);
}

}  // namespace rldk::io
