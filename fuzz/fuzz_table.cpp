// Arbitrary bytes read as a Parquet or Feather metric table (io/table_run: Arrow's readers, then rldk's cell
// conversion into records): no crash, no overread, an error or a run. Arrow reads a file (its footer indexes it), so
// each input is written to a temporary file first. Seeds are tables written by pandas, polars and pyarrow
// (fuzz/corpus/table).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/table_run.h"
#include "rldk/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/rldk_fuzz_table_" + std::to_string(getpid());
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  rldk::ReadOptions options;
  rldk::SummaryBuilder sink;
  rldk::Diagnostics diagnostics;
  if (rldk::io::is_table_file(path)) (void)rldk::io::read_table_run(path, options, sink, diagnostics);
  return 0;
}
