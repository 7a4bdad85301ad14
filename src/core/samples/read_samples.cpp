// read_samples(): the cells of a file or folder (read_table) assembled into per-completion SampleRows, or into
// preference pairs for files laid out as pairs.
#include "rldk/samples.h"
#include "samples/cell_sink.h"
#include "samples/pair_assembler.h"
#include "samples/sample_assembler.h"

namespace rldk {
namespace {

// Chooses per file: a file whose columns form preference pairs goes to the pair assembler when the caller takes
// pairs, every other file to the sample assembler.
class SamplesOrPairs : public samples::CellSink {
 public:
  SamplesOrPairs(const SampleReadOptions& options, SampleSink& sink, PairSink* pairs, Diagnostics& diagnostics)
      : mapping_(options.columns), samples_(options, sink, diagnostics) {
    if (pairs) pairs_.emplace(options.columns, *pairs, diagnostics);
  }

  Status begin_file(const std::string& path, const std::vector<samples::FileColumn>& columns,
                    std::optional<int64_t> file_step, const std::string& format) override {
    current_ = &samples_;
    if (pairs_ && samples::PairAssembler::is_pair_table(columns, mapping_)) current_ = &*pairs_;
    return current_->begin_file(path, columns, file_step, format);
  }
  int column_index(std::string_view name) const override { return current_->column_index(name); }
  int add_column(const samples::FileColumn& column) override { return current_->add_column(column); }
  void set_text(int column, std::string_view text) override { current_->set_text(column, text); }
  void set_number(int column, double value) override { current_->set_number(column, value); }
  void end_row(uint64_t row) override { current_->end_row(row); }
  uint64_t rows() const override { return samples_.rows() + (pairs_ ? pairs_->rows() : 0); }

 private:
  const SampleColumns& mapping_;
  samples::SampleAssembler samples_;
  std::optional<samples::PairAssembler> pairs_;
  samples::CellSink* current_ = &samples_;
};

}  // namespace

Status read_samples(const std::string& path, const SampleReadOptions& options, SampleSink& sink,
                    Diagnostics& diagnostics, PairSink* pairs) {
  SamplesOrPairs assembler(options, sink, pairs, diagnostics);
  return samples::read_table(path, assembler, diagnostics);
}

}  // namespace rldk
