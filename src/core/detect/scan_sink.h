// The point sink that scans while a source is read: every run of the source into its own detect::RunScanner.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "detect/run_scanner.h"
#include "rldk/reader.h"
#include "rldk/scan.h"

namespace rldk::detect {

class ScanSink final : public PointSink {
 public:
  explicit ScanSink(const ScanOptions& options) : options_(options) {}
  void on_run(uint32_t run, const std::string& run_id, const SourceInfo& source) override {
    if (runs_.size() <= run) runs_.resize(run + 1);
    runs_[run].scanner = std::make_unique<RunScanner>(options_, run_id, source.path);
  }
  void on_metric(uint32_t run, uint32_t metric, const std::string& canonical_name) override {
    Slot& slot = runs_[run];
    if (slot.ids.size() <= metric) slot.ids.resize(metric + 1);
    slot.ids[metric] = slot.scanner->add_metric(canonical_name);
  }
  void on_raw_name(uint32_t, const std::string&, const std::string&) override {}
  void on_segment(uint32_t run, const Segment&) override { runs_[run].scanner->restart(); }
  void on_point(uint32_t run, uint32_t metric, const Point& point) override {
    Slot& slot = runs_[run];
    slot.scanner->point(slot.ids[metric], point.step, point.value);
  }
  void on_meta(uint32_t run, const std::string& key, const std::string& value) override {
    if (run < runs_.size() && runs_[run].scanner) runs_[run].scanner->meta(key, value);
  }

  // False when some run's points came out of step order after its planning: the source must be scanned whole.
  bool in_step_order() const {
    return std::all_of(runs_.begin(), runs_.end(), [](const Slot& s) { return !s.scanner || s.scanner->in_step_order(); });
  }
  // Each run's scan (and charts, if asked for), in the order the runs appeared; diagnostics are the caller's.
  std::vector<SourceScan> take() {
    std::vector<SourceScan> scans;
    for (Slot& slot : runs_) {
      if (!slot.scanner) continue;
      SourceScan& out = scans.emplace_back();
      out.scan = slot.scanner->finish();
      slot.scanner->take_series(out);
    }
    runs_.clear();
    return scans;
  }

 private:
  struct Slot {
    std::unique_ptr<RunScanner> scanner;
    std::vector<uint32_t> ids;  // the reader's metric id -> the scanner's
  };
  const ScanOptions& options_;
  std::vector<Slot> runs_;
};

}  // namespace rldk::detect
