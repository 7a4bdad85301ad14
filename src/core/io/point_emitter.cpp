#include "io/point_emitter.h"

namespace rldk::io {

PointEmitter::PointEmitter(SourceInfo source, const ReadOptions& options, PointSink& sink)
    : source_(std::move(source)),
      canonicalize_(options.canonicalize),
      dictionary_(options.dictionary ? options.dictionary : &MetricDictionary::builtin()),
      sink_(sink),
      default_run_id_(options.run_id) {}

PointEmitter::RunSlot& PointEmitter::slot_for(std::string_view run_id) {
  if (run_id.empty()) run_id = default_run_id_;
  if (last_ != nullptr && last_->run_id == run_id) return *last_;
  for (auto& slot : runs_) {
    if (slot->run_id == run_id) return *(last_ = slot.get());
  }
  auto slot = std::make_unique<RunSlot>();
  slot->id = static_cast<uint32_t>(runs_.size());
  slot->run_id = std::string(run_id);
  sink_.on_run(slot->id, slot->run_id, source_);
  runs_.push_back(std::move(slot));
  return *(last_ = runs_.back().get());
}

uint32_t PointEmitter::metric_for(RunSlot& slot, std::string_view raw_name) {
  if (auto it = slot.raw_to_metric.find(raw_name); it != slot.raw_to_metric.end()) return it->second;
  const std::string& raw = slot.names.emplace_back(raw_name);
  std::string canonical = canonicalize_ ? dictionary_->canonical_name(raw) : raw;
  auto [it, inserted] = slot.canonical_to_metric.emplace(canonical, static_cast<uint32_t>(slot.metrics.size()));
  if (inserted) {
    slot.metrics.emplace_back();
    sink_.on_metric(slot.id, it->second, canonical);
  }
  sink_.on_raw_name(slot.id, raw, canonical);
  slot.raw_to_metric.emplace(raw, it->second);
  return it->second;
}

void PointEmitter::emit(std::string_view run_id, std::string_view raw_name, int64_t step, double value,
                        double wall_time, uint64_t line) {
  RunSlot& slot = slot_for(run_id);
  uint32_t metric = metric_for(slot, raw_name);
  MetricState& state = slot.metrics[metric];
  // A step going backwards within the current segment means the trainer restarted (resumed from a checkpoint):
  // a new segment. A metric whose last point lies in an older segment is simply catching up with the restart.
  bool restart = state.has_point && step < state.last_step && state.last_segment == slot.segment;
  if (restart) ++slot.segment;
  if (restart || !slot.segment_open) {
    slot.segment_open = true;
    sink_.on_segment(slot.id, Segment{slot.segment, step, step, line});
  }
  state.last_step = step;
  state.last_segment = slot.segment;
  state.has_point = true;
  ++points_;
  sink_.on_point(slot.id, metric, Point{step, value, wall_time, slot.segment, line});
}

void PointEmitter::meta(std::string_view run_id, std::string_view key, std::string_view value) {
  RunSlot& slot = slot_for(run_id);
  sink_.on_meta(slot.id, std::string(key), std::string(value));
}

void PointEmitter::meta_all(std::string_view key, std::string_view value) {
  for (auto& slot : runs_) sink_.on_meta(slot->id, std::string(key), std::string(value));
}

}  // namespace rldk::io
