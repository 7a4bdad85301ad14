// Turns the cells of a preference-pair file into PairRows: prompt, the two completions (chosen/rejected or
// response_a/response_b), the reward model's score of each, and which one was preferred.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "rldk/samples.h"
#include "samples/cell_sink.h"

namespace rldk::samples {

class PairAssembler : public CellSink {
 public:
  PairAssembler(const SampleColumns& mapping, PairSink& sink, Diagnostics& diagnostics)
      : mapping_(mapping), sink_(sink), diagnostics_(diagnostics) {}

  // Whether a file with these columns holds preference pairs: two completion columns, or two score columns.
  static bool is_pair_table(const std::vector<FileColumn>& columns, const SampleColumns& mapping);

  // An error when the pairs are named A/B and carry no label: which one was preferred is then unknown.
  Status begin_file(const std::string& path, const std::vector<FileColumn>& columns, std::optional<int64_t> file_step,
                    const std::string& format) override;
  int column_index(std::string_view name) const override;
  int add_column(const FileColumn& column) override;
  void set_text(int column, std::string_view text) override;
  void set_number(int column, double value) override;
  void end_row(uint64_t row) override;
  uint64_t rows() const override { return rows_; }

  enum class Role { none, prompt, first, second, first_score, second_score, label };
  static Role role_of(const FileColumn& column, const SampleColumns& mapping);

 private:
  const SampleColumns& mapping_;
  PairSink& sink_;
  Diagnostics& diagnostics_;

  std::string path_;
  std::vector<Role> roles_;
  std::vector<std::string> names_;
  bool chosen_named_ = false;  // chosen/rejected data: the first is preferred unless a label says otherwise
  std::string prompt_, first_, second_;
  double first_score_ = std::numeric_limits<double>::quiet_NaN();
  double second_score_ = std::numeric_limits<double>::quiet_NaN();
  double label_ = std::numeric_limits<double>::quiet_NaN();
  bool bad_label_ = false;
  uint64_t rows_ = 0, bad_labels_ = 0;
};

}  // namespace rldk::samples
