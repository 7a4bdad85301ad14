// Writers behind `rldk ingest`: canonical long-form JSONL (streamed, constant memory) and wide CSV (one row per run
// and step, one column per canonical metric; needs the whole run in memory to know its columns).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "rldk/reader.h"
#include "rldk/result.h"

namespace rldk {

// Writes every point as an EventWriter-format line with its canonical name, and its restart segment when it is not
// the first.
class LongJsonlSink : public PointSink {
 public:
  explicit LongJsonlSink(std::FILE* out) : out_(out) {}
  void on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) override;
  void on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) override;
  void on_raw_name(uint32_t, const std::string&, const std::string&) override {}
  void on_segment(uint32_t, const Segment&) override {}
  void on_point(uint32_t run, uint32_t metric, const Point& point) override;
  void on_meta(uint32_t, const std::string&, const std::string&) override {}
  bool failed() const { return failed_; }

 private:
  std::FILE* out_;
  std::vector<std::string> run_ids_;
  std::vector<std::vector<std::string>> names_;  // per run, per metric id
  std::string line_;
  bool failed_ = false;
};

// Columns: run_id, step, segment, then canonical metric names sorted. Missing values are empty cells; non-finite
// values are written as nan, inf, -inf. Several points of one metric at the same step and segment: the last wins.
Status write_wide_csv(const std::vector<Run>& runs, std::FILE* out);

}  // namespace rldk
