// The run data model: columnar series of canonical metrics, with where they came from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rldk/diagnostics.h"

namespace rldk {

// One metric over time, columnar. Points keep arrival order. Non-finite values stay in `values` as observations.
struct Series {
  std::string name;                 // canonical name
  std::vector<int64_t> steps;
  std::vector<double> values;
  std::vector<double> wall_times;   // NaN where the source had no time; empty if read without point details
  std::vector<uint32_t> segments;   // index into Run::segments of each point; empty if read without point details

  size_t size() const { return steps.size(); }
  size_t non_finite_count() const;
  // Index of the first non-finite value, or size() if there is none.
  size_t first_non_finite() const;
};

// A stretch of the run in which steps only move forward. A step going backwards (a resumed or restarted trainer)
// starts a new segment instead of being treated as noise.
struct Segment {
  uint32_t index = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
  uint64_t start_line = 0;  // source line where the segment begins (0 for non-line formats)
};

struct SourceInfo {
  std::string path;    // "-" for stdin
  std::string format;  // see format_name() in reader.h
  std::string compression;  // "", "gzip" or "zstd"
};

struct Run {
  std::string run_id;
  SourceInfo source;
  std::map<std::string, Series> series;               // by canonical name
  std::map<std::string, std::string> raw_to_canonical;  // every raw name seen, and where it went
  std::map<std::string, std::string> meta;            // source metadata (e.g. trainer_state fields, step source)
  std::vector<Segment> segments;
  Diagnostics diagnostics;

  const Series* find(const std::string& canonical_name) const;
  int64_t first_step() const;  // over all series; 0 when empty
  int64_t last_step() const;
  uint64_t point_count() const;
};

}  // namespace rldk
