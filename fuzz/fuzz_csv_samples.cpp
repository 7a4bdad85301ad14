// The CSV sample reader (Arrow's streaming CSV reader plus rldk's record tracking, number parsing and re-reads with
// larger blocks) on arbitrary bytes. The reader takes a path, so the bytes go to an in-memory file (memfd); the
// first byte picks a small block size, so records longer than a block and the re-read are exercised too.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "samples/csv_samples.h"

namespace {

// Checks what a CellSink may rely on: cells only of the columns begun, rows only after begin_file.
class CheckingSink : public rldk::samples::CellSink {
 public:
  rldk::Status begin_file(const std::string&, const std::vector<rldk::samples::FileColumn>& columns,
                          std::optional<int64_t>, const std::string&) override {
    if (begun_) __builtin_trap();  // one file, begun once (re-reads pass over rows already given)
    begun_ = true;
    columns_ = columns.size();
    return rldk::Ok{};
  }
  int column_index(std::string_view) const override { return -1; }
  int add_column(const rldk::samples::FileColumn&) override { return static_cast<int>(columns_++); }
  void set_text(int column, std::string_view) override { check(column); }
  void set_number(int column, double) override { check(column); }
  void end_row(uint64_t row) override {
    if (!begun_ || row != rows_) __builtin_trap();  // rows numbered in order, none twice
    ++rows_;
  }
  uint64_t rows() const override { return rows_; }

 private:
  void check(int column) const {
    if (!begun_ || column < 0 || static_cast<size_t>(column) >= columns_) __builtin_trap();
  }
  bool begun_ = false;
  size_t columns_ = 0;
  uint64_t rows_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int fd = memfd_create("fuzz_csv_samples", 0);
  if (fd < 0) return 0;
  if (size > 1 && write(fd, data + 1, size - 1) != static_cast<ssize_t>(size - 1)) {
    close(fd);
    return 0;
  }
  rldk::samples::CsvOptions options;
  options.block_size = 16 + data[0];
  CheckingSink sink;
  rldk::Diagnostics diagnostics;
  (void)rldk::samples::read_csv_samples("/proc/self/fd/" + std::to_string(fd), sink, diagnostics,
                                        options);
  close(fd);
  return 0;
}
