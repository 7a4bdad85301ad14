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
#include "samples/cell_sink.h"

namespace rldk::samples {

class SampleAssembler : public CellSink {
 public:
  SampleAssembler(const SampleReadOptions& options, SampleSink& sink, Diagnostics& diagnostics)
      : mapping_(options.columns), completion_required_(options.completion_required), sink_(sink),
        diagnostics_(diagnostics) {}

  // An error when the file has no completion column or no reward column.
  Status begin_file(const std::string& path, const std::vector<FileColumn>& columns, std::optional<int64_t> file_step,
                    const std::string& format) override;
  int column_index(std::string_view name) const override;
  // A late column (e.g. a gold score only on judged samples) gets its role as in begin_file.
  int add_column(const FileColumn& column) override;
  void set_text(int column, std::string_view text) override;
  void set_number(int column, double value) override;
  void end_row(uint64_t row) override;
  uint64_t rows() const override { return rows_; }

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

}  // namespace rldk::samples
