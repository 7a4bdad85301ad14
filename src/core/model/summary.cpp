#include "rldk/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/read_each_file.h"

namespace rldk {

void SummaryBuilder::on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) {
  if (slots_.size() <= run) slots_.resize(run + 1);
  slots_[run].summary.run_id = run_id;
  slots_[run].summary.source = source;
}

void SummaryBuilder::on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) {
  Slot& slot = slots_[run];
  MetricSummary& m = slot.summary.metrics[canonical_name];
  m.name = canonical_name;
  m.min = m.max = std::numeric_limits<double>::quiet_NaN();
  if (slot.metrics.size() <= metric) slot.metrics.resize(metric + 1);
  slot.metrics[metric] = &m;
}

void SummaryBuilder::on_raw_name(uint32_t run, const std::string& raw_name, const std::string& canonical_name) {
  slots_[run].summary.metrics[canonical_name].raw_names.push_back(raw_name);
}

void SummaryBuilder::on_segment(uint32_t run, const Segment& segment) {
  slots_[run].summary.segments.push_back(segment);
}

void SummaryBuilder::on_point(uint32_t run, uint32_t metric, const Point& p) {
  Slot& slot = slots_[run];
  RunSummary& run_summary = slot.summary;
  MetricSummary& m = *slot.metrics[metric];
  if (m.count == 0) m.first_step = m.last_step = p.step;
  m.first_step = std::min(m.first_step, p.step);
  m.last_step = std::max(m.last_step, p.step);
  ++m.count;
  m.last = p.value;
  if (std::isfinite(p.value)) {
    if (std::isnan(m.min) || p.value < m.min) m.min = p.value;
    if (std::isnan(m.max) || p.value > m.max) m.max = p.value;
  } else if (m.non_finite++ == 0) {
    m.first_non_finite_step = p.step;
    m.first_non_finite_line = p.line;
  }
  if (run_summary.points++ == 0) run_summary.first_step = run_summary.last_step = p.step;
  run_summary.first_step = std::min(run_summary.first_step, p.step);
  run_summary.last_step = std::max(run_summary.last_step, p.step);
  Segment& segment = run_summary.segments[p.segment];
  segment.first_step = std::min(segment.first_step, p.step);
  segment.last_step = std::max(segment.last_step, p.step);
}

void SummaryBuilder::on_meta(uint32_t run, const std::string& key, const std::string& value) {
  slots_[run].summary.meta[key] = value;
}

std::vector<RunSummary> SummaryBuilder::take() {
  std::vector<RunSummary> out;
  for (auto& slot : slots_) out.push_back(std::move(slot.summary));
  slots_.clear();
  return out;
}

Result<std::vector<RunSummary>> summarize_source(const std::string& path, const ReadOptions& options,
                                                 unsigned threads) {
  return io::map_each_file<RunSummary, SummaryBuilder>(path, options, threads,
                                                       [](RunSummary&& s) { return std::move(s); });
}

}  // namespace rldk
