// Scans whatever a JSONL reader makes of the input with the built-in detector catalog: every detector kind meets
// arbitrary values (huge, tiny, NaN/inf, repeated), steps that go backwards, points out of step order and metrics
// that come and go. The scan fed while reading (detect::ScanSink) must give exactly the report of the whole run
// replayed (scan_run): a fuzz input is shorter than the planning length, so both plan on all of the data.
#include <cmath>
#include <string_view>

#include "detect/scan_sink.h"
#include "rldk/reader.h"
#include "rldk/scan.h"

namespace {

// Hands every callback to both sinks.
class Tee final : public rldk::PointSink {
 public:
  Tee(rldk::PointSink& a, rldk::PointSink& b) : a_(a), b_(b) {}
  void on_run(uint32_t run, const std::string& id, const rldk::SourceInfo& source) override {
    a_.on_run(run, id, source);
    b_.on_run(run, id, source);
  }
  void on_metric(uint32_t run, uint32_t metric, const std::string& name) override {
    a_.on_metric(run, metric, name);
    b_.on_metric(run, metric, name);
  }
  void on_raw_name(uint32_t run, const std::string& raw, const std::string& name) override {
    a_.on_raw_name(run, raw, name);
    b_.on_raw_name(run, raw, name);
  }
  void on_segment(uint32_t run, const rldk::Segment& segment) override {
    a_.on_segment(run, segment);
    b_.on_segment(run, segment);
  }
  void on_point(uint32_t run, uint32_t metric, const rldk::Point& point) override {
    a_.on_point(run, metric, point);
    b_.on_point(run, metric, point);
  }
  void on_meta(uint32_t run, const std::string& key, const std::string& value) override {
    a_.on_meta(run, key, value);
    b_.on_meta(run, key, value);
  }

 private:
  rldk::PointSink& a_;
  rldk::PointSink& b_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rldk::ReadOptions options = rldk::scan_read_options();
  options.format = rldk::Format::jsonl;
  options.point_details = true;  // per-point segments, so the replay restarts where the reader did
  rldk::RunBuilder whole(options);
  rldk::ScanOptions scan_options;
  rldk::detect::ScanSink streaming(scan_options);
  Tee tee(whole, streaming);
  rldk::Diagnostics diagnostics;
  rldk::StreamReader reader(rldk::SourceInfo{"fuzz", "", ""}, options, tee, diagnostics);
  reader.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  reader.finish();
  if (!streaming.in_step_order()) __builtin_trap();  // within planning, points out of order are held, not dropped
  std::vector<rldk::SourceScan> streamed = streaming.take();
  std::vector<rldk::Run> runs = whole.take();
  if (streamed.size() != runs.size()) __builtin_trap();
  for (size_t i = 0; i < runs.size(); ++i) {
    rldk::RunScan scan = rldk::scan_run(runs[i], scan_options);
    // Invariants: an episode ends at or after its onset, and health scores are probabilities.
    for (const auto& f : scan.findings) {
      if (f.onset_step > f.end_step) __builtin_trap();
    }
    if (!(scan.health.overall >= 0 && scan.health.overall <= 1)) __builtin_trap();
    if (rldk::run_scan_json(scan).dump() != rldk::run_scan_json(streamed[i].scan).dump()) __builtin_trap();
  }
  return 0;
}
