// Readers: turn whatever a trainer wrote into canonical metric series.
//
// Every format is read incrementally: bytes are pushed into a StreamReader as they arrive, so the same code reads a
// finished file and tails a growing one, with memory bounded by the longest line (documents such as
// trainer_state.json are the exception: they are parsed whole, at the end). Points flow into a PointSink; Run is
// one such sink, the streaming summary behind `rldk info` another.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/metric_dictionary.h"
#include "rldk/result.h"
#include "rldk/run.h"

namespace rldk {

// Formats a reader can detect. The JSONL family is decided per line (long-form event, wide record, verl record).
// tensorboard (event files) and wandb (run-*.wandb transaction logs) are binary, record-based formats, recognised
// from their first bytes or file name and read incrementally like the text formats.
enum class Format { unknown, jsonl, json_document, csv, tsv, console, tensorboard, wandb };
std::string format_name(Format format);
// The Format named by format_name() (or "auto" for unknown); false for any other name.
bool parse_format_name(const std::string& name, Format& format);

struct ReadOptions {
  // The format to read; unknown means detect it from the content.
  Format format = Format::unknown;
  // Run id for points that carry none. Empty: derived from the path (file stem, or the parent directory's name for
  // generic file names such as trainer_state.json or metrics.jsonl).
  std::string run_id;
  // Map raw names to canonical names (data/metrics.yaml). When false, raw names are kept as they are.
  bool canonicalize = true;
  // Dictionary used for canonical names and step/time fields; nullptr means the built-in one.
  const MetricDictionary* dictionary = nullptr;
  // Keep each point's wall time and segment index (Series::wall_times, Series::segments). False leaves both empty:
  // for analyses that need only steps and values (scan, doctor), which then hold a large run in half the memory.
  bool point_details = true;
  // The text arrives while it is being written (a monitor following a trainer). A console reader then decides which
  // of a log's line shapes is the metrics sooner, instead of looking ahead through the file.
  bool live = false;
};

struct Point {
  int64_t step = 0;
  double value = 0.0;
  double wall_time = 0.0;  // NaN when unknown
  uint32_t segment = 0;
  uint64_t line = 0;       // 1-based source line; for record-based formats the 1-based record number
};

// Receives what a reader finds. Ids are dense per reader: run ids from 0, metric ids from 0 within each run.
class PointSink {
 public:
  virtual ~PointSink() = default;
  virtual void on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) = 0;
  virtual void on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) = 0;
  virtual void on_raw_name(uint32_t run, const std::string& raw_name, const std::string& canonical_name) = 0;
  virtual void on_segment(uint32_t run, const Segment& segment) = 0;  // a segment begins (the first one too)
  virtual void on_point(uint32_t run, uint32_t metric, const Point& point) = 0;
  virtual void on_meta(uint32_t run, const std::string& key, const std::string& value) = 0;
};


class StreamReaderImpl;

// Reads one byte stream (already decompressed) incrementally.
class StreamReader {
 public:
  StreamReader(SourceInfo source, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  void feed(std::string_view bytes);
  // The bytes fed from now on come from `file`, the next file of the same record-format run (the next event file of
  // a TensorBoard log dir): what the last one left unfinished is reported against it, and framing starts afresh.
  void next_file(const std::string& file);
  void finish();  // end of data: the partial last line is parsed, documents are parsed
  Format format() const;
  // Short description of what was recognised, e.g. "jsonl (long-form events)" or "console (verl, hf-dict)".
  std::string format_detail() const;
  uint64_t points() const;
  uint32_t runs() const;  // runs (distinct run ids) produced so far
  uint64_t lines() const;
  // Complete records of a record-based format (tensorboard, wandb) seen so far; 0 for text formats.
  uint64_t records() const;
  // True when the data starts with binary bytes (NUL) instead of text: not a run log.
  bool binary() const;

 private:
  std::unique_ptr<StreamReaderImpl> impl_;
};

// Reads a file (plain, gzip or zstd), a directory of runs (recursively), or "-" for stdin, pushing into `sink`.
// Fails with a clear error on an unreadable path or when nothing recognisable is found.
Status read_source(const std::string& path, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics);

// Reads a source into complete runs (one per file and run id).
Result<std::vector<Run>> read_runs(const std::string& path, const ReadOptions& options = {});

// Builds Run objects from points: the materialising sink behind read_runs.
class RunBuilder : public PointSink {
 public:
  RunBuilder();
  explicit RunBuilder(const ReadOptions& options);
  ~RunBuilder() override;
  RunBuilder(RunBuilder&&) noexcept;
  RunBuilder& operator=(RunBuilder&&) noexcept;
  void on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) override;
  void on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) override;
  void on_raw_name(uint32_t run, const std::string& raw_name, const std::string& canonical_name) override;
  void on_segment(uint32_t run, const Segment& segment) override;
  void on_point(uint32_t run, uint32_t metric, const Point& point) override;
  void on_meta(uint32_t run, const std::string& key, const std::string& value) override;
  std::vector<Run> take();

 private:
  bool point_details_ = true;
  struct Slot;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace rldk
