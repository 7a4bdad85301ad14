// CSV/TSV sample files, read with Apache Arrow's streaming CSV reader (no hand-written CSV parser: quoting, doubled
// quotes, CRLF and newlines inside quoted fields are Arrow's). The bytes come through io::ByteSource, so gzip and
// zstd files are read like plain ones, chunk by chunk.
//
// Every column is read as bytes and numbers are parsed here, rather than letting Arrow infer types: Arrow's
// streaming reader fixes the types it infers from the first block, and a later block with text in such a column
// ("n/a", "error" in a reward column) fails the whole read with no way to resume. Reading bytes, one odd cell is
// one diagnostic and the rest of the file is still read; binary (not utf8) also lets non-UTF-8 bytes through as
// they are, as the JSONL reader does (the report writers escape them). A column counts as numeric, as Arrow's
// inference would say, when every non-empty cell of the first block reads as a number.
//
// Memory is bounded whatever the file's size: Arrow parses and converts one block at a time (use_threads off: no
// batches decoded ahead), and its I/O thread reads at most 32 raw blocks ahead (Arrow's fixed background
// read-ahead, kDefaultBackgroundMaxQ), so about 33 MiB with the default 1 MiB blocks.
#include "samples/csv_samples.h"

#include <arrow/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/interfaces.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <memory>

#include "io/byte_source.h"
#include "io/lenient_json.h"

namespace rldk::samples {
namespace {

// Arrow cannot carry a record across two block boundaries; a file with a longer record (a huge completion) is read
// again with larger blocks, up to this size, the longest line the JSONL readers take.
constexpr int32_t MAX_BLOCK = int32_t{64} << 20;

// Follows the records of the bytes Arrow is given, the way Arrow's parser splits them (a quote opens a quoted field
// only at the start of a field; "" inside one is a quote; empty lines are no records), for two things Arrow does not
// give: the line a record starts on (Arrow numbers records, and a record spans several lines when a quoted field
// holds newlines), and whether the data ends inside a quoted field. Arrow takes such a cut-off field to the end of
// the file as its value, inventing a completion out of whatever follows the opening quote; the reader drops that
// row instead and says why.
//
// Arrow's streaming reader calls Read() on its I/O thread, ahead of the batches the reader is given, so the tracker
// is shared between that thread and the reader's: every method takes its mutex.
class RecordTracker {
 public:
  explicit RecordTracker(char delimiter) : delimiter_(delimiter) {}

  void feed(const char* p, size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    const char* end = p + n;
    while (p < end) {
      char c = *p;
      switch (state_) {
        case State::quoted: {
          const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
          const char* stop = q ? q : end;
          for (const char* nl = p; (nl = static_cast<const char*>(std::memchr(nl, '\n', stop - nl))); ++nl) ++line_;
          if (!q) return;
          p = q + 1;
          state_ = State::quote_in_quoted;
          continue;
        }
        case State::quote_in_quoted:
          // A doubled quote stays inside; anything else closes the field (Arrow keeps stray bytes after it).
          state_ = c == '"' ? State::quoted : after(c);
          break;
        case State::line_start:
          if (c == '\n' || c == '\r') break;
          begin_record();
          state_ = c == '"' ? State::quoted : after(c);
          break;
        case State::field_start: state_ = c == '"' ? State::quoted : after(c); break;
        case State::unquoted: state_ = after(c); break;
      }
      if (c == '\n') ++line_;
      ++p;
    }
  }

  // Forgets the line starts of records before `record` (rows given to the sink): what is kept is bounded by Arrow's
  // read-ahead, not by the file.
  void release_before(uint64_t record) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (starts_.size() > 1 && starts_[1].first <= record) {
      starts_.pop_front();
      pruned_ = true;
    }
  }

  // The line record `number` (Arrow's numbering: 1 is the header) starts on; 0 when no longer known.
  uint64_t line_of(uint64_t number) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (number == 0 || number > records_) return 0;
    if (starts_.empty() || number < starts_.front().first) return pruned_ ? 0 : number;
    auto it = std::upper_bound(starts_.begin(), starts_.end(), number,
                               [](uint64_t n, const std::pair<uint64_t, uint64_t>& s) { return n < s.first; });
    --it;  // not begin(): number >= the first start
    return it->second + (number - it->first);
  }

  bool inside_quotes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return state_ == State::quoted;
  }
  size_t open_field() const {  // the field the data ends in (0-based)
    std::lock_guard<std::mutex> lock(mutex_);
    return field_;
  }
  uint64_t records() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_;
  }

 private:
  enum class State : uint8_t { line_start, field_start, unquoted, quoted, quote_in_quoted };

  State after(char c) {
    if (c == delimiter_) {
      ++field_;
      return State::field_start;
    }
    if (c == '\n' || c == '\r') return State::line_start;
    return State::unquoted;
  }
  void begin_record() {
    ++records_;
    field_ = 0;
    // Stored only where a line start stops following from the one before (after a record of several lines).
    if (starts_.empty() ? line_ != records_ : starts_.back().second + (records_ - starts_.back().first) != line_) {
      starts_.emplace_back(records_, line_);
    }
  }

  mutable std::mutex mutex_;
  char delimiter_;
  State state_ = State::line_start;
  uint64_t line_ = 1;
  uint64_t records_ = 0;
  size_t field_ = 0;
  std::deque<std::pair<uint64_t, uint64_t>> starts_;  // (record, line) where the offset between them changes
  bool pruned_ = false;  // records before starts_.front() are no longer known
};

// A ByteSource (decompressing) as the input stream Arrow reads, with the bytes already taken for sniffing served
// first, and every byte shown to the QuoteTracker.
class SourceStream : public arrow::io::InputStream {
 public:
  SourceStream(std::unique_ptr<io::ByteSource> source, std::string head, char delimiter)
      : source_(std::move(source)), head_(std::move(head)), tracker_(delimiter) {}

  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }

  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    char* dest = static_cast<char*>(out);
    int64_t done = 0;
    while (done < nbytes && head_used_ < head_.size()) {
      size_t n = std::min(head_.size() - head_used_, static_cast<size_t>(nbytes - done));
      std::memcpy(dest + done, head_.data() + head_used_, n);
      head_used_ += n;
      done += static_cast<int64_t>(n);
    }
    while (done < nbytes && !ended_) {
      size_t n = source_->read(dest + done, static_cast<size_t>(nbytes - done));
      if (n == 0) ended_ = true;
      done += static_cast<int64_t>(n);
    }
    tracker_.feed(dest, static_cast<size_t>(done));
    position_ += done;
    return done;
  }

  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateResizableBuffer(nbytes));
    ARROW_ASSIGN_OR_RAISE(int64_t n, Read(nbytes, buffer->mutable_data()));
    ARROW_RETURN_NOT_OK(buffer->Resize(n, false));
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }

  RecordTracker& tracker() { return tracker_; }
  std::string problem() const { return source_->problem(); }

 private:
  std::unique_ptr<io::ByteSource> source_;
  std::string head_;
  size_t head_used_ = 0;
  bool ended_ = false;
  bool closed_ = false;
  int64_t position_ = 0;
  RecordTracker tracker_;
};

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// A cell as a number: what io::parse_number reads (NaN, inf, 1e-05, as Python writes them), and pandas' spellings
// of booleans, which the JSONL and Parquet readers also take as 1 and 0.
bool cell_number(std::string_view cell, double& value) {
  cell = trim(cell);
  if (cell == "True" || cell == "true" || cell == "TRUE") {
    value = 1.0;
    return true;
  }
  if (cell == "False" || cell == "false" || cell == "FALSE") {
    value = 0.0;
    return true;
  }
  return io::parse_number(cell, value);
}

std::string quoted_excerpt(std::string_view cell) {
  constexpr size_t MAX = 40;
  return "'" + std::string(cell.substr(0, MAX)) + (cell.size() > MAX ? "...'" : "'");
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

class CsvRows {
 public:
  CsvRows(const std::string& path, CellSink& sink, Diagnostics& diagnostics)
      : path_(path), sink_(sink), diagnostics_(diagnostics) {}

  // A read of the file from its start, through `tracker`'s stream: rows given to the sink by an earlier read (one
  // that stopped at a record longer than its block) are passed over, and their problems not reported again.
  void start(RecordTracker& tracker) {
    tracker_ = &tracker;
    seen_ = 0;
    skipped_.clear();
    next_skip_ = 0;
    skipped_before_ = 0;
  }

  // The columns as the first `typed` rows of the first batch show them.
  std::vector<FileColumn> columns(const arrow::RecordBatch& batch, int64_t typed) {
    std::vector<FileColumn> out;
    numeric_.clear();
    for (int c = 0; c < batch.num_columns(); ++c) {
      const std::string& name = batch.schema()->field(c)->name();
      const auto& cells = static_cast<const arrow::BinaryArray&>(*batch.column(c));
      bool any = false, all = true;
      double value = 0;
      for (int64_t i = 0; i < typed && all; ++i) {
        std::string_view cell = cells.GetView(i);
        if (trim(cell).empty()) continue;
        any = true;
        all = cell_number(cell, value);
      }
      // An unnamed column is pandas' index (to_csv writes one unless index=False): row numbers, never a score.
      bool index = name.empty() || name.rfind("Unnamed: ", 0) == 0;
      numeric_.push_back(any && all && !index);
      out.push_back({name, numeric_.back()});
    }
    return out;
  }

  // A row Arrow skipped (record numbers come in increasing order).
  void skipped(const arrow::csv::InvalidRow& bad) {
    if (bad.number > 0) skipped_.push_back(static_cast<uint64_t>(bad.number));
    if (bad.number > 0 && static_cast<uint64_t>(bad.number) <= reported_) return;  // told by an earlier read
    if (bad.number > 0) reported_ = static_cast<uint64_t>(bad.number);
    uint64_t line = bad.number > 0 ? tracker_->line_of(static_cast<uint64_t>(bad.number)) : 0;
    diagnostics_.add(Diagnostic{"ragged_row", path_, line,
                                "row with " + std::to_string(bad.actual_columns) + " fields, the header has " +
                                    std::to_string(bad.expected_columns) + "; row skipped"});
  }

  void row(const arrow::RecordBatch& batch, int64_t i) {
    uint64_t record = next_record();
    tracker_->release_before(record);
    if (++seen_ <= row_) return;  // given to the sink by an earlier read
    reported_ = std::max(reported_, record);
    for (int c = 0; c < batch.num_columns(); ++c) {
      std::string_view cell = static_cast<const arrow::BinaryArray&>(*batch.column(c)).GetView(i);
      double value = 0;
      bool number = !trim(cell).empty() && cell_number(cell, value);
      if (numeric_[c]) {
        if (number) {
          sink_.set_number(c, value);
        } else if (!trim(cell).empty()) {
          sink_.set_text(c, cell);
          diagnostics_.add(Diagnostic{"non_numeric_cell", path_, tracker_->line_of(record),
                                      "column '" + batch.schema()->field(c)->name() + "': " + quoted_excerpt(cell) +
                                          " is not a number (the column is numeric above); cell left missing"});
        }
      } else {
        // A number in a text column is given as both, number first: a step or reward column that the first
        // block showed as text (or one named with --reward-col) takes the number, a text role the text.
        if (number) sink_.set_number(c, value);
        sink_.set_text(c, cell);
      }
    }
    sink_.end_row(row_++);
  }

 private:
  // Arrow's number of the record of the next data row: after the header (1) and the rows Arrow skipped before it.
  uint64_t next_record() {
    uint64_t record = seen_ + 2 + skipped_before_;
    while (next_skip_ < skipped_.size() && skipped_[next_skip_] <= record) {
      ++next_skip_;
      ++skipped_before_;
      ++record;
    }
    if (next_skip_ > 4096) {  // bounded: only the skips ahead of the rows read so far are kept
      skipped_.erase(skipped_.begin(), skipped_.begin() + static_cast<std::ptrdiff_t>(next_skip_));
      next_skip_ = 0;
    }
    return record;
  }

  const std::string& path_;
  CellSink& sink_;
  Diagnostics& diagnostics_;
  RecordTracker* tracker_ = nullptr;
  std::vector<bool> numeric_;
  std::vector<uint64_t> skipped_;  // records Arrow skipped, ahead of the rows read so far
  size_t next_skip_ = 0;
  uint64_t skipped_before_ = 0;
  uint64_t seen_ = 0;      // data rows of this read
  uint64_t row_ = 0;       // data rows given to the sink
  uint64_t reported_ = 0;  // the last record whose problems are reported
};

Error arrow_error(const std::string& path, const arrow::Status& status) {
  return Error{ErrorCode::unreadable, "cannot read CSV: " + status.message(), path};
}

}  // namespace

char sniff_csv_delimiter(std::string_view head, std::string_view path) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  size_t counts[3] = {0, 0, 0};
  const char candidates[3] = {',', '\t', ';'};
  bool quoted = false;
  for (char c : head) {
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '\n' || c == '\r') break;
    for (int k = 0; k < 3; ++k) counts[k] += c == candidates[k];
  }
  bool tsv = ends_with(path, ".tsv") || ends_with(path, ".tsv.gz") || ends_with(path, ".tsv.zst");
  char best = tsv ? '\t' : ',';
  size_t most = counts[tsv ? 1 : 0];
  for (int k = 0; k < 3; ++k) {
    if (counts[k] > most) {
      most = counts[k];
      best = candidates[k];
    }
  }
  return best;
}

namespace {


// One read of the file from its start with Arrow's blocks of `block_size` bytes. Sets `straddled` when Arrow stopped at
// a record longer than a block (it cannot carry one across two block boundaries): the caller reads again with larger
// blocks, passing over the rows already read.
Status read_csv_once(const std::string& path, CellSink& sink, Diagnostics& diagnostics, const CsvOptions& options,
                     int32_t block_size, CsvRows& rows, bool& begun, bool& straddled) {
  straddled = false;
  auto source = io::open_byte_source(path);
  if (!source.ok()) return source.error();
  // The first bytes name the separator; they are then served to Arrow ahead of the rest.
  std::string head(64 << 10, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = source.value()->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  if (trim(head).find_first_not_of("\r\n") == std::string_view::npos) {
    diagnostics.add(Diagnostic{"empty_file", path, 0, "empty CSV file: no header, no rows"});
    return Ok{};
  }
  char delimiter = options.delimiter != 0 ? options.delimiter : sniff_csv_delimiter(head, path);
  auto stream = std::make_shared<SourceStream>(std::move(source).value(), std::move(head), delimiter);
  rows.start(stream->tracker());

  auto read = arrow::csv::ReadOptions::Defaults();
  read.use_threads = false;  // one block at a time, in order: bounded memory and diagnostics in file order
  read.block_size = block_size;
  auto parse = arrow::csv::ParseOptions::Defaults();
  parse.delimiter = delimiter;
  parse.newlines_in_values = true;
  parse.invalid_row_handler = [&](const arrow::csv::InvalidRow& bad) {
    rows.skipped(bad);
    return arrow::csv::InvalidRowResult::Skip;
  };
  auto convert = arrow::csv::ConvertOptions::Defaults();
  convert.default_column_type = arrow::binary();  // see the top of this file
  convert.strings_can_be_null = false;

  auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), stream, read, parse, convert);
  if (!reader.ok()) {
    straddled = reader.status().message().find("straddl") != std::string::npos;
    return arrow_error(path, reader.status());
  }

  // Each batch is given out once the next one has arrived (or the data has ended): the last batch may end with a
  // row cut off inside a quoted field, which Arrow has completed with everything after the opening quote. That row
  // is dropped, not reported, and does not take part in deciding which columns are numeric.
  auto give_out = [&](const arrow::RecordBatch& batch, bool drop_last) -> Status {
    int64_t n = batch.num_rows() - (drop_last ? 1 : 0);
    if (n <= 0) return Ok{};
    if (!begun) {
      Status s = sink.begin_file(path, rows.columns(batch, n), step_from_file_name(path),
                                 delimiter == '\t' ? "tsv" : "csv");
      if (!s.ok()) return s;
      begun = true;
    }
    for (int64_t i = 0; i < n; ++i) rows.row(batch, i);
    return Ok{};
  };
  std::shared_ptr<arrow::RecordBatch> pending;
  bool failed = false;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status next = (*reader)->ReadNext(&batch);
    if (!next.ok()) {
      if (pending) {
        Status s = give_out(*pending, false);
        if (!s.ok()) return s;
      }
      if (next.message().find("straddl") != std::string::npos) {
        straddled = true;
        return arrow_error(path, next);
      }
      // Arrow's other errors: what was read so far stays read.
      if (!begun) return arrow_error(path, next);
      diagnostics.add(Diagnostic{"unreadable_rest", path, 0,
                                 "cannot read the rest of the CSV: " + next.message() + "; rows before it kept"});
      pending.reset();
      failed = true;
      break;
    }
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    if (pending) {
      Status s = give_out(*pending, false);
      if (!s.ok()) return s;
    }
    pending = std::move(batch);
  }
  const RecordTracker& tracker = stream->tracker();
  bool drop_last = false;
  if (!failed && tracker.inside_quotes()) {
    // Arrow's row is whole (and the last of the last batch) only when the cut field is the last column; otherwise
    // it has too few fields and Arrow has skipped it already.
    diagnostics.add(Diagnostic{"truncated_input", path, tracker.line_of(tracker.records()),
                               "the file ends inside a quoted field (cut off while being written?); the row "
                               "starting here is incomplete and was dropped"});
    drop_last = pending && static_cast<int>(tracker.open_field()) == pending->num_columns() - 1;
  }
  if (pending) {
    Status s = give_out(*pending, drop_last);
    if (!s.ok()) return s;
  }
  if (!begun) {
    diagnostics.add(Diagnostic{"empty_file", path, 0, "CSV file has a header but no rows"});
  }
  std::string problem = stream->problem();
  if (!problem.empty()) diagnostics.add(Diagnostic{"truncated_input", path, 0, problem});
  return Ok{};
}

}  // namespace

Status read_csv_samples(const std::string& path, CellSink& sink, Diagnostics& diagnostics,
                        const CsvOptions& options) {
  CsvRows rows(path, sink, diagnostics);
  bool begun = false;
  int32_t block = std::max<int32_t>(options.block_size, 1);
  for (;;) {
    bool straddled = false;
    Status s = read_csv_once(path, sink, diagnostics, options, block, rows, begun, straddled);
    if (s.ok() || !straddled || block >= MAX_BLOCK) return s;
    block = block > MAX_BLOCK / 4 ? MAX_BLOCK : block * 4;
  }
}

}  // namespace rldk::samples
