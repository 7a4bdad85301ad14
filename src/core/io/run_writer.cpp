#include "rldk/run_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "io/time_parse.h"
#include "model/json_text.h"
#include "model/utf8.h"

namespace rldk {

void LongJsonlSink::on_run(uint32_t run, const std::string& run_id, const SourceInfo&) {
  if (run_ids_.size() <= run) {
    run_ids_.resize(run + 1);
    names_.resize(run + 1);
  }
  run_ids_[run] = run_id;
}

void LongJsonlSink::on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) {
  auto& names = names_[run];
  if (names.size() <= metric) names.resize(metric + 1);
  names[metric] = canonical_name;
}

void LongJsonlSink::on_point(uint32_t run, uint32_t metric, const Point& p) {
  line_.clear();
  line_ += "{\"name\":";
  append_json_string(line_, names_[run][metric]);
  line_ += ",\"run_id\":";
  append_json_string(line_, run_ids_[run]);
  line_ += ",\"step\":" + std::to_string(p.step);
  // After a restart (steps going backwards: a resume, or a second training stage) the same steps come again; the
  // segment tells their values apart for whoever reads the events (rldk recomputes it, data/metrics.yaml ignores it).
  if (p.segment > 0) line_ += ",\"segment\":" + std::to_string(p.segment);
  if (std::isfinite(p.wall_time)) line_ += ",\"time\":" + io::json_time_value(p.wall_time);
  line_ += ",\"value\":";
  append_double(line_, p.value);
  line_ += "}\n";
  if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) failed_ = true;
}

namespace {
// A cell as RFC 4180 quotes it, in valid UTF-8: an invalid byte becomes U+FFFD, as in the JSONL output, so the
// file opens in every CSV reader (pandas, polars and Excel all refuse invalid UTF-8).
void append_csv_cell(std::string& out, const std::string& text) {
  bool quote = text.find_first_of(",\"\n\r") != std::string::npos;
  if (quote) out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (text[i] == '"') out.push_back('"');
    out.append(text, i, len);
    i += len;
  }
  if (quote) out.push_back('"');
}

void append_csv_number(std::string& out, double v) {
  if (std::isnan(v)) out += "nan";
  else if (std::isinf(v)) out += v > 0 ? "inf" : "-inf";
  else append_double(out, v);
}
}  // namespace

Status write_wide_csv(const std::vector<Run>& runs, std::FILE* out) {
  std::set<std::string> columns;
  for (const auto& run : runs) {
    for (const auto& [name, s] : run.series) columns.insert(name);
  }
  std::string text = "run_id,step,segment";
  for (const auto& c : columns) {
    text.push_back(',');
    append_csv_cell(text, c);
  }
  text.push_back('\n');
  std::map<std::string, size_t> column_index;
  for (const auto& c : columns) column_index.emplace(c, column_index.size());
  for (const auto& run : runs) {
    // (segment, step) -> one value per column
    std::map<std::pair<uint32_t, int64_t>, std::vector<std::optional<double>>> rows;
    for (const auto& [name, s] : run.series) {
      size_t col = column_index[name];
      for (size_t i = 0; i < s.size(); ++i) {
        auto& row = rows[{s.segments[i], s.steps[i]}];
        if (row.empty()) row.resize(columns.size());
        row[col] = s.values[i];
      }
    }
    for (const auto& [key, row] : rows) {
      append_csv_cell(text, run.run_id);
      text += "," + std::to_string(key.second) + "," + std::to_string(key.first);
      for (const auto& cell : row) {
        text.push_back(',');
        if (cell) append_csv_number(text, *cell);
      }
      text.push_back('\n');
      if (text.size() > (1u << 20)) {
        if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
          return Error{ErrorCode::io, std::string("write failed: ") + std::strerror(errno), ""};
        }
        text.clear();
      }
    }
  }
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
    return Error{ErrorCode::io, std::string("write failed: ") + std::strerror(errno), ""};
  }
  return Ok{};
}

}  // namespace rldk
