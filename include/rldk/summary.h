// Streaming per-metric summaries of a source: what `rldk info` prints. Memory depends on the number of metrics and
// segments, never on the number of points.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rldk/reader.h"

namespace rldk {

struct MetricSummary {
  std::string name;                  // canonical
  std::vector<std::string> raw_names;
  uint64_t count = 0;                // all observations, non-finite included
  uint64_t non_finite = 0;
  double min = 0.0, max = 0.0;       // over finite values; NaN when there is none
  double last = 0.0;                 // the last observation as logged (may be NaN)
  int64_t first_step = 0, last_step = 0;
  int64_t first_non_finite_step = 0;  // valid when non_finite > 0
  uint64_t first_non_finite_line = 0;
};

struct RunSummary {
  std::string run_id;
  SourceInfo source;
  std::map<std::string, std::string> meta;
  std::vector<Segment> segments;
  std::map<std::string, MetricSummary> metrics;  // by canonical name
  uint64_t points = 0;
  int64_t first_step = 0, last_step = 0;
  Diagnostics diagnostics;  // of the file this run came from
};

class SummaryBuilder : public PointSink {
 public:
  void on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) override;
  void on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) override;
  void on_raw_name(uint32_t run, const std::string& raw_name, const std::string& canonical_name) override;
  void on_segment(uint32_t run, const Segment& segment) override;
  void on_point(uint32_t run, uint32_t metric, const Point& point) override;
  void on_meta(uint32_t run, const std::string& key, const std::string& value) override;
  std::vector<RunSummary> take();

 private:
  struct Slot {
    RunSummary summary;
    std::vector<MetricSummary*> metrics;
  };
  std::vector<Slot> slots_;
};

// Summarises every run of a source (file, directory or "-"); a directory's files are read on `threads` threads (0:
// one per core), the summaries in file order whatever the count.
Result<std::vector<RunSummary>> summarize_source(const std::string& path, const ReadOptions& options = {},
                                                 unsigned threads = 0);

}  // namespace rldk
