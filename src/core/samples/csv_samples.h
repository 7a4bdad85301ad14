// Reads one CSV or TSV sample file (score files written by pandas or a spreadsheet; gzip/zstd too) into a CellSink,
// with Apache Arrow's streaming CSV reader: RFC 4180 quoting, newlines inside quoted fields (completions are
// multi-line text), a bounded number of blocks in memory whatever the file's size.
#pragma once

#include <cstdint>
#include <string>

#include "samples/cell_sink.h"

namespace rldk::samples {

struct CsvOptions {
  // The field separator; 0: the one of ',', '\t' and ';' that the header line holds most often outside quotes,
  // and on a tie '\t' for a .tsv file name, ',' otherwise.
  char delimiter = 0;
  // Bytes Arrow parses at a time. Memory holds one block being parsed plus Arrow's read-ahead of up to 32 more; a
  // record longer than a block makes the reader start again with blocks 4 times larger (up to 64 MiB).
  int32_t block_size = 1 << 20;
};

Status read_csv_samples(const std::string& path, CellSink& sink, Diagnostics& diagnostics,
                        const CsvOptions& options = {});

// The separator of a CSV text whose first bytes are `head` (options' rule above): for read_table's sniffing too.
char sniff_csv_delimiter(std::string_view head, std::string_view path);

}  // namespace rldk::samples
