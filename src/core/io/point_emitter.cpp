#include "io/point_emitter.h"

#include <cstring>

#include "io/run_settings.h"

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

// A cheap hash for the name cache: the length and the first and last eight bytes. Names that share all of those
// only share a cache slot; correctness never depends on the hash.
size_t PointEmitter::name_cache_index(std::string_view name) {
  uint64_t head = 0;
  uint64_t tail = 0;
  if (name.size() >= 8) {
    std::memcpy(&head, name.data(), 8);
    std::memcpy(&tail, name.data() + name.size() - 8, 8);
  } else if (!name.empty()) {
    std::memcpy(&head, name.data(), name.size());
  }
  uint64_t h = (head ^ (tail * 0x9E3779B97F4A7C15) ^ name.size()) * 0xD6E8FEB86659FD93;
  return static_cast<size_t>(h >> (64 - NAME_CACHE_BITS));
}

uint32_t PointEmitter::metric_index(uint32_t run, std::string_view raw_name) {
  RunSlot& slot = *runs_[run];
  CachedName& cached = slot.name_cache[name_cache_index(raw_name)];
  if (cached.metric != NO_METRIC && cached.name == raw_name) return cached.metric;
  uint32_t metric = metric_for(slot, raw_name);
  cached.name = slot.raw_to_metric.find(raw_name)->first;  // the owned copy, stable in the deque
  cached.metric = metric;
  return metric;
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

void PointEmitter::prepare_record(uint32_t run, const std::vector<std::pair<uint32_t, double>>& points,
                                  int64_t step, uint64_t line) {
  RunSlot& slot = *runs_[run];
  for (const auto& [metric, value] : points) {
    const MetricState& state = slot.metrics[metric];
    if (state.has_point && step < state.last_step && state.last_segment == slot.segment) {
      // emit_at sees these metrics' last points in an older segment and does not restart again.
      ++slot.segment;
      slot.segment_open = true;
      sink_.on_segment(slot.id, Segment{slot.segment, step, step, line});
      return;
    }
  }
}

void PointEmitter::emit_at(uint32_t run, uint32_t metric, int64_t step, double value, double wall_time,
                           uint64_t line) {
  RunSlot& slot = *runs_[run];
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
  // A config value or param that is a training setting is also recorded under its canonical name.
  if (key.substr(0, SETTING_META_PREFIX.size()) == SETTING_META_PREFIX) return;
  find_settings_in_meta(key, value, *dictionary_, [&](const SettingInfo& setting, std::string_view number) {
    sink_.on_meta(slot.id, std::string(SETTING_META_PREFIX) + setting.name, std::string(number));
  });
}

void PointEmitter::meta_all(std::string_view key, std::string_view value) {
  for (auto& slot : runs_) sink_.on_meta(slot->id, std::string(key), std::string(value));
}

}  // namespace rldk::io
