// Scans whatever a JSONL reader makes of the input with the built-in detector catalog: every detector kind meets
// arbitrary values (huge, tiny, NaN/inf, repeated), steps that go backwards and metrics that come and go.
#include <cmath>
#include <string_view>

#include "rldk/reader.h"
#include "rldk/scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rldk::ReadOptions options = rldk::scan_read_options();
  options.format = rldk::Format::jsonl;
  rldk::RunBuilder sink(options);
  rldk::Diagnostics diagnostics;
  rldk::StreamReader reader(rldk::SourceInfo{"fuzz", "", ""}, options, sink, diagnostics);
  reader.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  reader.finish();
  for (const auto& run : sink.take()) {
    rldk::RunScan scan = rldk::scan_run(run);
    // Invariants: an episode ends at or after its onset, and health scores are probabilities.
    for (const auto& f : scan.findings) {
      if (f.onset_step > f.end_step) __builtin_trap();
    }
    if (!(scan.health.overall >= 0 && scan.health.overall <= 1)) __builtin_trap();
  }
  return 0;
}
