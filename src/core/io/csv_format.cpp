// CSV/TSV with a header row (stable-baselines3 progress.csv, Lightning CSVLogger metrics.csv, exported tables).
// Writers that discover new keys rewrite the header; when a row looks like a header again (no numeric cell and the
// step column or most names repeat) it replaces the current header instead of being read as data.
//
// A W&B chart export ("Export panel data" as CSV) has a "Step" column and, per run shown in the chart, columns
// "<run name> - <metric>" with "__MIN"/"__MAX" companions (the range of the points a plotted bucket merged). Each run
// is read as a run of its own, under its W&B display name, with the metric's logged name; the companions are not
// metrics, and a run's empty cells (a shorter run in the same chart) are no points.
#include <algorithm>
#include <string>
#include <vector>

#include "io/line_format.h"
#include "io/source_files.h"

namespace rldk::io {
namespace {

class CsvFormat final : public LineFormat {
 public:
  CsvFormat(ReadContext& context, char delimiter) : context_(context), records_(context), delimiter_(delimiter) {}

  void line(std::string_view text, uint64_t number) override {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.empty()) return;
    // A spreadsheet saved in a locale whose decimal mark is a comma separates cells with ';' ("step;loss" then
    // "1;0,5"): decided on the header, which then has no comma.
    if (header_.empty() && delimiter_ == ',' && text.find(',') == std::string_view::npos &&
        text.find(';') != std::string_view::npos) {
      delimiter_ = ';';
    }
    if (!split(text, number)) return;
    if (header_.empty() || looks_like_header()) {
      if (!header_.empty()) ++header_changes_;
      header_.clear();
      for (const auto& c : cells_) header_.emplace_back(trim(c));
      plan_scalar_export();
      plan_chart_export();
      return;
    }
    if (!chart_runs_.empty()) {
      chart_row(number);
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
      if (is_row_index(header_[i])) continue;
      if (delimiter_ == ';') cell = with_decimal_point(cell);
      add_field(header_[i], cell);
    }
    if (records_.wide(record_, number, row_index_)) ++row_index_;
  }

  void end_file() override {
    header_.clear();
    chart_runs_.clear();
  }

  std::string detail() const override {
    std::string out = delimiter_ == '\t' ? "tsv" : delimiter_ == ';' ? "csv (';'-separated)" : "csv";
    if (!chart_runs_.empty()) {
      out += " (W&B chart export: " + std::to_string(chart_runs_.size()) +
             (chart_runs_.size() == 1 ? " run)" : " runs)");
    }
    if (scalar_tags_.size() == 1) out += " (TensorBoard scalar export: " + scalar_tags_.front() + ")";
    if (scalar_tags_.size() > 1) out += " (TensorBoard scalar exports: " + std::to_string(scalar_tags_.size()) + " tags)";
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

  // TensorBoard's scalar download ("Wall time,Step,Value", one tag per file, saved as run-<run>-tag-<tag>.csv with the
  // tag's '/' written '_'): the value is the tag's, named by the file; the wall time is the point's time.
  void plan_scalar_export() {
    if (header_.size() != 3 || header_[0] != "Wall time" || header_[1] != "Step" || header_[2] != "Value") return;
    std::string name = tensorboard_export_tag(context_.file);
    header_ = {"wall_time", "step", name};
    scalar_tags_.push_back(name);
  }

  // A W&B chart export's header: a "Step" column, and every other column "<run> - <metric>", some with "__MIN" /
  // "__MAX" companions. Fills chart_runs_ (empty: not such a header).
  void plan_chart_export() {
    chart_runs_.clear();
    chart_columns_.assign(header_.size(), ChartColumn{});
    bool step = false, companion = false;
    for (size_t i = 0; i < header_.size(); ++i) {
      const std::string& name = header_[i];
      if (name == "Step") {
        chart_columns_[i].step = true;
        step = true;
        continue;
      }
      size_t dash = name.find(" - ");
      if (dash == std::string::npos || dash == 0 || dash + 3 >= name.size()) {
        chart_runs_.clear();
        return;
      }
      std::string_view metric = std::string_view(name).substr(dash + 3);
      if (metric.ends_with("__MIN") || metric.ends_with("__MAX")) {
        companion = true;
        continue;  // not a metric: the range a plotted bucket merged
      }
      std::string run = name.substr(0, dash);
      auto it = std::find(chart_runs_.begin(), chart_runs_.end(), run);
      chart_columns_[i].run = static_cast<int>(it - chart_runs_.begin());
      if (it == chart_runs_.end()) chart_runs_.push_back(run);
      chart_columns_[i].metric.assign(metric);
    }
    if (!step || !companion) chart_runs_.clear();
  }

  // One row of a chart export: a wide record per run that has a value in it, with the step and the run's name.
  void chart_row(uint64_t number) {
    std::string_view step;
    for (size_t i = 0; i < std::min(cells_.size(), header_.size()); ++i) {
      if (chart_columns_[i].step) step = trim(cells_[i]);
    }
    if (step.empty()) {
      context_.diagnose("missing_step", number, "chart export row has no Step; skipped");
      return;
    }
    for (size_t r = 0; r < chart_runs_.size(); ++r) {
      record_.clear();
      add_field("step", step);
      add_field("run_id", chart_runs_[r]);
      size_t metrics = 0;
      for (size_t i = 0; i < std::min(cells_.size(), header_.size()); ++i) {
        std::string_view cell = trim(cells_[i]);
        if (chart_columns_[i].run != static_cast<int>(r) || cell.empty()) continue;
        add_field(chart_columns_[i].metric, cell);
        ++metrics;
      }
      if (metrics > 0) records_.wide(record_, number, std::nullopt);
    }
  }

  void add_field(std::string_view key, std::string_view value) {
    FlatField f{};
    f.key_begin = static_cast<uint32_t>(record_.arena.size());
    record_.arena.append(key);
    f.key_len = static_cast<uint32_t>(key.size());
    f.str_begin = static_cast<uint32_t>(record_.arena.size());
    record_.arena.append(value);
    f.str_len = static_cast<uint32_t>(value.size());
    f.kind = ValueKind::string;  // numeric strings become values in the interpreter
    record_.fields.push_back(f);
  }

  // pandas' DataFrame.to_csv writes the row index as a first column with no name (read back and written again, as
  // "Unnamed: 0"): row numbers, not a metric.
  static bool is_row_index(std::string_view name) { return name.empty() || name.starts_with("Unnamed: "); }

  // "0,5" in a ';'-separated file is 0.5; other cells are left as they are.
  std::string_view with_decimal_point(std::string_view cell) {
    size_t comma = cell.find(',');
    if (comma == std::string_view::npos || cell.find(',', comma + 1) != std::string_view::npos) return cell;
    decimal_.assign(cell);
    decimal_[comma] = '.';
    double ignored = 0;
    return parse_number(decimal_, ignored) ? std::string_view(decimal_) : cell;
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

  std::vector<std::string> scalar_tags_;  // the tags of the TensorBoard downloads read
  ReadContext& context_;
  RecordInterpreter records_;
  char delimiter_;
  std::string decimal_;  // a cell with its decimal comma made a point
  std::vector<std::string> header_;
  std::vector<std::string> cells_;
  FlatRecord record_;
  // A W&B chart export (see plan_chart_export): its runs, and per header column its role.
  struct ChartColumn {
    bool step = false;
    int run = -1;  // -1: not a metric column (the step, or a __MIN/__MAX companion)
    std::string metric;
  };
  std::vector<std::string> chart_runs_;
  std::vector<ChartColumn> chart_columns_;
  int64_t row_index_ = 0;
  uint64_t header_changes_ = 0;
};

}  // namespace

std::unique_ptr<LineFormat> make_csv_format(ReadContext& context, char delimiter) {
  return std::make_unique<CsvFormat>(context, delimiter);
}

}  // namespace rldk::io
