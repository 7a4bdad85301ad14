// What the table readers fill: the cells of one sample file (any format), row by row. A CellSink decides what the
// columns mean: SampleAssembler turns them into SampleRows (one completion per row), PairAssembler into preference
// pairs. Format readers (JSONL, Parquet, ...) know nothing of either; read_table() picks the reader per file.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/result.h"

namespace rldk::samples {

struct FileColumn {
  std::string name;
  bool numeric = false;  // its values are numbers (a Parquet numeric type; a JSON number in the first record)
};

class CellSink {
 public:
  virtual ~CellSink() = default;
  // Starts a file. `file_step` is the step its name carries (completions_00005.parquet, 5.jsonl), used for rows
  // without a step column. An error when the file lacks the columns the sink needs.
  virtual Status begin_file(const std::string& path, const std::vector<FileColumn>& columns,
                            std::optional<int64_t> file_step, const std::string& format) = 0;
  // Index of a column of the current file by name, or -1 (for formats whose records name their fields).
  virtual int column_index(std::string_view name) const = 0;
  // A column first seen after begin_file (a JSONL key missing from the first record). Returns its index.
  virtual int add_column(const FileColumn& column) = 0;
  virtual void set_text(int column, std::string_view text) = 0;
  virtual void set_number(int column, double value) = 0;
  // Emits the row with the cells set since the last end_row (cells not set are missing), then clears them.
  virtual void end_row(uint64_t row) = 0;
  virtual uint64_t rows() const = 0;
};

// The position of `name` in a sink's column names, or -1: what column_index answers for sinks that keep the names
// of the current file in order.
inline int position_of(const std::vector<std::string>& names, std::string_view name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// Whether a column is called one of `names` (compared lower-cased): column roles are found by the names TRL,
// verl, OpenRLHF and hand-written score files use.
inline bool column_named(std::string_view name, std::initializer_list<std::string_view> names) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return std::find(names.begin(), names.end(), lower) != names.end();
}

// Reads a file, or a folder's sample files in step order (a trainer's output folder is read through its
// completions/ folder), each sniffed by content, into `sink`. One damaged file of a folder is reported in
// `diagnostics` and skipped; an error when nothing could be read.
Status read_table(const std::string& path, CellSink& sink, Diagnostics& diagnostics);

// Whether a folder entry is a sample file rldk reads (Parquet, JSONL/JSON, CSV/TSV, compressed too; not W&B's
// own wandb-*.json files).
bool sample_file_name(const std::filesystem::path& p);

// The step a sample file's name carries: the last run of digits in completions_00005.parquet or 12.jsonl.
std::optional<int64_t> step_from_file_name(std::string_view path);

}  // namespace rldk::samples
