// Turns the cells of one sample file (any format) into SampleRows: decides which column is the step, the prompt,
// the completion, the rewards..., keeps the reward columns of the first file as the read's schema (later files are
// mapped onto it by name), and says what is missing. Formats only fill cells and call end_row().
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rldk/samples.h"

namespace rldk::samples {

struct FileColumn {
  std::string name;
  bool numeric = false;  // its values are numbers (a Parquet numeric type; a JSON number in the first record)
};

class SampleAssembler {
 public:
  SampleAssembler(const SampleReadOptions& options, SampleSink& sink, Diagnostics& diagnostics)
      : mapping_(options.columns), completion_required_(options.completion_required), sink_(sink),
        diagnostics_(diagnostics) {}

  // Starts a file. `file_step` is the step its name carries (completions_00005.parquet, 5.jsonl), used for rows
  // without a step column. An error when the file has no completion column or no reward column.
  Status begin_file(const std::string& path, const std::vector<FileColumn>& columns, std::optional<int64_t> file_step,
                    const std::string& format);
  // Index of a column of the current file by name, or -1 (for formats whose records name their fields).
  int column_index(std::string_view name) const;
  // A column first seen after begin_file (a JSONL key missing from the first record, e.g. a gold score only on
  // judged samples); its role is decided as begin_file would. Returns its index.
  int add_column(const FileColumn& column);

  void set_text(int column, std::string_view text);
  void set_number(int column, double value);
  // Emits the row with the cells set since the last end_row (cells not set are missing), then clears them.
  void end_row(uint64_t row);

  uint64_t rows() const { return rows_; }

 private:
  enum class Role { none, step, prompt, completion, group, advantage, gold, reward };
  Role role_of(const FileColumn& column) const;

  const SampleColumns& mapping_;
  bool completion_required_;
  SampleSink& sink_;
  Diagnostics& diagnostics_;
  std::vector<std::string> reward_names_;  // fixed by the first file
  bool schema_fixed_ = false;
  SampleSchema schema_;

  // The current file.
  std::string path_;
  std::optional<int64_t> file_step_;
  std::vector<Role> roles_;
  std::vector<int> reward_slot_;  // per column: its index in reward_names_, or -1
  std::unordered_map<std::string, int> index_;
  std::string prompt_, completion_, group_;
  bool has_step_ = false;
  double step_ = 0;
  std::vector<double> rewards_;
  double advantage_ = std::numeric_limits<double>::quiet_NaN();
  double gold_ = std::numeric_limits<double>::quiet_NaN();
  uint64_t rows_ = 0;
  uint64_t bad_steps_ = 0;
};

// The step a sample file's name carries: the last run of digits in completions_00005.parquet or 12.jsonl.
std::optional<int64_t> step_from_file_name(std::string_view path);

}  // namespace rldk::samples
