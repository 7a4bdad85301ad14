#include "io/table_run.h"

#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include "io/point_emitter.h"
#include "io/records.h"
#include "samples/parquet_samples.h"

namespace rldk::io {
namespace {

// Arrow's cell stream (the sample readers' Parquet/Arrow reading, batch by batch: memory holds one batch) turned
// into wide records.
class RecordCells : public samples::CellSink {
 public:
  explicit RecordCells(ReadContext& context) : records_(context) {}

  Status begin_file(const std::string&, const std::vector<samples::FileColumn>& columns, std::optional<int64_t>,
                    const std::string& format) override {
    names_.clear();
    index_.clear();
    for (const auto& c : columns) add_column(c);
    format_ = format;
    return Ok{};
  }
  int column_index(std::string_view name) const override { return samples::position_of(names_, name); }
  int add_column(const samples::FileColumn& column) override {
    names_.push_back(column.name);
    // pandas' to_parquet keeps a DataFrame's index (when it is not 0..n-1) as __index_level_0__: row labels, not a
    // metric (the CSV reader skips pandas' unnamed index column for the same reason).
    index_.push_back(column.name.starts_with("__index_level_"));
    return static_cast<int>(names_.size() - 1);
  }
  void set_text(int column, std::string_view text) override {
    if (index_[static_cast<size_t>(column)]) return;
    FlatField& f = add_field(column);
    f.kind = ValueKind::string;  // a numeric string becomes a value in the interpreter, as in CSV
    f.str_begin = static_cast<uint32_t>(record_.arena.size());
    record_.arena.append(text);
    f.str_len = static_cast<uint32_t>(text.size());
  }
  void set_number(int column, double value) override {
    if (index_[static_cast<size_t>(column)]) return;
    FlatField& f = add_field(column);
    f.kind = ValueKind::number;
    f.number = value;
  }
  void end_row(uint64_t row) override {
    // Without a step column a row's step is its index, as for a CSV file.
    records_.wide(record_, row + 1, static_cast<int64_t>(row));
    record_.clear();
    ++rows_;
  }
  uint64_t rows() const override { return rows_; }
  const std::string& format() const { return format_; }

 private:
  FlatField& add_field(int column) {
    std::string_view name = names_[static_cast<size_t>(column)];
    FlatField f{};
    f.key_begin = static_cast<uint32_t>(record_.arena.size());
    record_.arena.append(name);
    f.key_len = static_cast<uint32_t>(name.size());
    record_.fields.push_back(f);
    return record_.fields.back();
  }

  RecordInterpreter records_;
  FlatRecord record_;
  std::vector<std::string> names_;
  std::vector<bool> index_;  // per column: a pandas index kept in the file
  std::string format_;
  uint64_t rows_ = 0;
};

std::string_view magic_of(const std::string& path, char (&head)[6]) {
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  return {head, static_cast<size_t>(in.gcount())};
}

}  // namespace

bool is_table_file(const std::string& path) {
  // Only a regular file can be a table; opening a FIFO or a device here would block or never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  char head[6];
  std::string_view magic = magic_of(path, head);
  return magic.starts_with("PAR1") || magic == "ARROW1";
}

Result<uint32_t> read_table_run(const std::string& path, const ReadOptions& options, PointSink& sink,
                                Diagnostics& diagnostics) {
  char head[6];
  bool parquet = magic_of(path, head).starts_with("PAR1");
  PointEmitter emitter(SourceInfo{path, parquet ? "parquet" : "arrow", ""}, options, sink);
  ReadContext context{emitter, diagnostics, path};
  RecordCells cells(context);
  Status read = parquet ? samples::read_parquet_samples(path, cells) : samples::read_arrow_ipc_samples(path, cells);
  if (!read.ok()) return read.error();
  if (emitter.points() == 0) {
    return Error{ErrorCode::unrecognized,
                 "no scalar metrics found in " + std::to_string(cells.rows()) + " rows (read as " + cells.format() + ")",
                 path};
  }
  emitter.meta_all("format_detail", cells.format() + " table (" + std::to_string(cells.rows()) + " rows)");
  return emitter.runs();
}

}  // namespace rldk::io
