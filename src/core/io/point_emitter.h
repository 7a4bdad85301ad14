// The normalize stage: format parsers hand it raw (run id, name, step, value, time) observations; it interns names,
// maps them to canonical names once per distinct name, splits runs into segments where steps go backwards, and
// passes dense-id points to the sink. Cost per point: a compare against a small cache of recent names (a hash lookup
// on a miss), or nothing when the caller keeps the ids (RecordInterpreter does for the columns of wide records).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rldk/reader.h"

namespace rldk::io {

class PointEmitter {
 public:
  PointEmitter(SourceInfo source, const ReadOptions& options, PointSink& sink);

  const MetricDictionary& dictionary() const { return *dictionary_; }
  void set_format(std::string format) { source_.format = std::move(format); }
  // `run_id` empty means the default run of this source.
  void emit(std::string_view run_id, std::string_view raw_name, int64_t step, double value, double wall_time,
            uint64_t line) {
    uint32_t run = run_index(run_id);
    emit_at(run, metric_index(run, raw_name), step, value, wall_time, line);
  }
  // emit() in steps, for callers that keep the ids of repeated names. The run is announced to the sink by
  // run_index, a metric by metric_index, so calling them in emit()'s order keeps the sink's view identical.
  uint32_t run_index(std::string_view run_id) { return slot_for(run_id).id; }
  uint32_t metric_index(uint32_t run, std::string_view raw_name);
  void emit_at(uint32_t run, uint32_t metric, int64_t step, double value, double wall_time, uint64_t line);
  // Call before emitting the points of one record (metric id, value): if the step goes backwards for any of them,
  // the new segment starts here, so every point of the record lands in it whatever order its keys come in.
  void prepare_record(uint32_t run, const std::vector<std::pair<uint32_t, double>>& points, int64_t step,
                      uint64_t line);
  void meta(std::string_view run_id, std::string_view key, std::string_view value);
  // Sets a meta value on every run this source has produced so far.
  void meta_all(std::string_view key, std::string_view value);
  uint64_t points() const { return points_; }
  uint32_t runs() const { return static_cast<uint32_t>(runs_.size()); }

 private:
  struct MetricState {
    int64_t last_step = 0;
    uint32_t last_segment = 0;
    bool has_point = false;
  };
  // Direct-mapped cache in front of raw_to_metric: long-form files cycle through a few names, line after line.
  struct CachedName {
    std::string_view name;  // points into RunSlot::names
    uint32_t metric = NO_METRIC;
  };
  static constexpr uint32_t NO_METRIC = UINT32_MAX;
  static constexpr int NAME_CACHE_BITS = 6;
  struct RunSlot {
    uint32_t id = 0;
    std::string run_id;
    std::deque<std::string> names;                       // owns the keys of raw_to_metric
    std::unordered_map<std::string_view, uint32_t> raw_to_metric;
    std::array<CachedName, size_t{1} << NAME_CACHE_BITS> name_cache;
    std::unordered_map<std::string, uint32_t> canonical_to_metric;
    std::vector<MetricState> metrics;
    uint32_t segment = 0;
    bool segment_open = false;
  };

  RunSlot& slot_for(std::string_view run_id);
  uint32_t metric_for(RunSlot& slot, std::string_view raw_name);
  static size_t name_cache_index(std::string_view name);

  SourceInfo source_;
  bool canonicalize_;
  const MetricDictionary* dictionary_;
  PointSink& sink_;
  std::string default_run_id_;
  std::vector<std::unique_ptr<RunSlot>> runs_;
  RunSlot* last_ = nullptr;
  uint64_t points_ = 0;
};

}  // namespace rldk::io
