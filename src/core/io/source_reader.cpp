// Reading whole sources: files (any compression), directories of runs, stdin.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "io/mlflow_reader.h"
#include "io/read_each_file.h"
#include "io/record_format.h"
#include "io/source_files.h"
#include "io/table_run.h"
#include "rldk/reader.h"

namespace rldk {
namespace {

constexpr size_t READ_CHUNK = size_t{1} << 20;

// Gives the runs of each file in a directory their own ids in one sink.
class OffsetSink final : public PointSink {
 public:
  explicit OffsetSink(PointSink& inner) : inner_(inner) {}
  uint32_t base = 0;
  void on_run(uint32_t run, const std::string& id, const SourceInfo& s) override { inner_.on_run(base + run, id, s); }
  void on_metric(uint32_t run, uint32_t m, const std::string& n) override { inner_.on_metric(base + run, m, n); }
  void on_raw_name(uint32_t run, const std::string& r, const std::string& c) override {
    inner_.on_raw_name(base + run, r, c);
  }
  void on_segment(uint32_t run, const Segment& s) override { inner_.on_segment(base + run, s); }
  void on_point(uint32_t run, uint32_t m, const Point& p) override { inner_.on_point(base + run, m, p); }
  void on_meta(uint32_t run, const std::string& k, const std::string& v) override { inner_.on_meta(base + run, k, v); }

 private:
  PointSink& inner_;
};

// What reading `path` gave: the number of runs, or why it gave none.
Result<uint32_t> what_was_read(const StreamReader& reader, const std::string& path, const Diagnostics& diagnostics) {
  if (reader.binary()) {
    return Error{ErrorCode::unrecognized,
                 "binary data, not a run log (expected JSONL, CSV, JSON, console text, a Parquet or Feather table, a "
                 "TensorBoard event file or a W&B .wandb log)",
                 path};
  }
  if (reader.points() == 0) {
    std::string why;
    if (io::is_record_format(reader.format())) {
      why = "no scalar metrics found in " + std::to_string(reader.records()) + " records";
    } else {
      why = reader.lines() == 0 ? "the file is empty" : "no metrics found in " + std::to_string(reader.lines()) + " lines";
    }
    if (reader.format() != Format::unknown) why += " (read as " + reader.format_detail() + ")";
    if (!diagnostics.examples().empty()) why += "; first problem: " + to_string(diagnostics.examples().front());
    return Error{ErrorCode::unrecognized, why, path};
  }
  return reader.runs();
}

// Reads one file into `sink`. Returns the number of runs it produced, or an error when the file cannot be read or
// holds nothing recognisable.
Result<uint32_t> read_file(const std::string& path, const ReadOptions& options, PointSink& sink,
                           Diagnostics& diagnostics) {
  // MLflow's stores are not byte streams: a folder of metric files, or a SQLite database.
  if (io::is_mlflow_run_dir(path)) return io::read_mlflow_run_dir(path, options, sink, diagnostics);
  if (path != "-" && io::is_sqlite_file(path)) return io::read_mlflow_sqlite(path, options, sink, diagnostics);
  // Parquet and Arrow tables are read by Arrow, which needs the whole file (a footer indexes it), not a stream.
  if (path != "-" && io::is_table_file(path)) {
    ReadOptions opts = options;
    if (opts.run_id.empty()) opts.run_id = io::default_run_id(path);
    return io::read_table_run(path, opts, sink, diagnostics);
  }
  // A run resumed into new files is one run, its files read in order as one stream of records: the event files of
  // a TensorBoard log dir, a W&B run log and the logs of the same run resumed later.
  std::vector<std::string> files;
  ReadOptions opts = options;
  if (path != "-") {
    files = io::tensorboard_log_files(path);
    if (!files.empty()) opts.format = Format::tensorboard;
    if (files.empty()) files = io::wandb_run_files(path);
    if (files.empty()) {
      files = io::tensorboard_download_files(path);
      if (!files.empty()) opts.format = path.ends_with(".json") ? Format::json_document : Format::csv;
    }
  }
  if (files.empty()) files.push_back(path);
  if (opts.run_id.empty()) opts.run_id = io::default_run_id(files.front());
  std::optional<StreamReader> reader;
  std::vector<char> buffer(READ_CHUNK);
  for (const std::string& file : files) {
    auto source = io::open_byte_source(file);
    if (!source.ok()) {
      if (files.size() == 1) return source.error();
      diagnostics.add(Diagnostic{"skipped_file", file, 0, "skipped: " + source.error().message});
      continue;
    }
    if (!reader) reader.emplace(SourceInfo{path, "", source.value()->compression()}, opts, sink, diagnostics);
    if (files.size() > 1) reader->next_file(file);
    for (;;) {
      size_t n = source.value()->read(buffer.data(), buffer.size());
      if (n == 0) break;
      reader->feed(std::string_view(buffer.data(), n));
      if (reader->binary()) break;
    }
    std::string problem = source.value()->problem();
    if (!problem.empty()) {
      diagnostics.add(Diagnostic{"truncated_input", file, reader->lines(), problem + "; data up to here was kept"});
    }
  }
  if (!reader) return Error{ErrorCode::unreadable, "none of its files could be read", path};
  reader->finish();  // also reads a last line without a newline
  return what_was_read(*reader, path, diagnostics);
}

}  // namespace

namespace io {

Status read_entry(const std::string& entry, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics) {
  auto runs = read_file(entry, options, sink, diagnostics);
  if (!runs.ok()) return runs.error();
  return Ok{};
}

}  // namespace io

bool parse_format_name(const std::string& name, Format& format) {
  for (Format f : {Format::unknown, Format::jsonl, Format::json_document, Format::csv, Format::tsv, Format::console,
                   Format::tensorboard, Format::wandb}) {
    if (name == (f == Format::unknown ? "auto" : format_name(f))) {
      format = f;
      return true;
    }
  }
  return false;
}

Status read_source(const std::string& path, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics) {
  auto files = io::list_source_files(path);
  if (!files.ok()) return files.error();
  bool directory = files.value().size() != 1 || files.value().front() != path;
  OffsetSink offset(sink);
  uint32_t found = 0;
  for (const auto& file : files.value()) {
    auto runs = read_file(file, options, offset, diagnostics);
    if (!runs.ok()) {
      if (!directory) return runs.error();
      // In a directory, a file that is not a run log is reported and skipped.
      diagnostics.add(Diagnostic{"skipped_file", file, 0, "skipped: " + runs.error().message});
      continue;
    }
    offset.base += runs.value();
    found += runs.value();
  }
  if (found == 0) {
    return Error{ErrorCode::unrecognized, "no metrics found in any of " + std::to_string(files.value().size()) +
                                              " files under this directory", path};
  }
  return Ok{};
}

Result<std::vector<Run>> read_runs(const std::string& path, const ReadOptions& options) {
  return io::read_each_file<Run, RunBuilder>(path, options);
}

struct RunBuilder::Slot {
  Run run;
  std::vector<Series*> metrics;
};

RunBuilder::RunBuilder() = default;
RunBuilder::RunBuilder(const ReadOptions& options) : point_details_(options.point_details) {}
RunBuilder::~RunBuilder() = default;
RunBuilder::RunBuilder(RunBuilder&&) noexcept = default;
RunBuilder& RunBuilder::operator=(RunBuilder&&) noexcept = default;

void RunBuilder::on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) {
  if (slots_.size() <= run) slots_.resize(run + 1);
  slots_[run] = std::make_unique<Slot>();
  slots_[run]->run.run_id = run_id;
  slots_[run]->run.source = source;
}

void RunBuilder::on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) {
  Slot& slot = *slots_[run];
  Series& series = slot.run.series[canonical_name];
  series.name = canonical_name;
  if (slot.metrics.size() <= metric) slot.metrics.resize(metric + 1);
  slot.metrics[metric] = &series;
}

void RunBuilder::on_raw_name(uint32_t run, const std::string& raw_name, const std::string& canonical_name) {
  slots_[run]->run.raw_to_canonical[raw_name] = canonical_name;
}

void RunBuilder::on_segment(uint32_t run, const Segment& segment) { slots_[run]->run.segments.push_back(segment); }

void RunBuilder::on_point(uint32_t run, uint32_t metric, const Point& point) {
  Slot& slot = *slots_[run];
  Series& s = *slot.metrics[metric];
  s.steps.push_back(point.step);
  s.values.push_back(point.value);
  if (point_details_) {
    s.wall_times.push_back(point.wall_time);
    s.segments.push_back(point.segment);
  }
  Segment& segment = slot.run.segments[point.segment];
  segment.first_step = std::min(segment.first_step, point.step);
  segment.last_step = std::max(segment.last_step, point.step);
}

void RunBuilder::on_meta(uint32_t run, const std::string& key, const std::string& value) {
  slots_[run]->run.meta[key] = value;
}

std::vector<Run> RunBuilder::take() {
  std::vector<Run> runs;
  for (auto& slot : slots_) {
    if (slot) runs.push_back(std::move(slot->run));
  }
  slots_.clear();
  return runs;
}

}  // namespace rldk
