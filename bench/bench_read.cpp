// bench_read FILE: reads one run log through rldk::read_source, the same path `rldk info` and `rldk ingest` use,
// into a sink that only counts, and prints one JSON object with the throughput and the peak memory.
//
// The sink sums the values (non-finite ones counted apart) so that the compiler cannot drop the work, and so that
// two builds can be checked to read the same data. Single-threaded; timing covers opening, decompressing, parsing
// and interpreting the file, i.e. everything a user waits for.
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "rldk/reader.h"

namespace {

class CountingSink final : public rldk::PointSink {
 public:
  uint64_t points = 0;
  uint64_t non_finite = 0;
  uint64_t runs = 0;
  uint64_t metrics = 0;
  uint64_t segments = 0;
  double sum = 0.0;
  int64_t step_sum = 0;

  void on_run(uint32_t, const std::string&, const rldk::SourceInfo&) override { ++runs; }
  void on_metric(uint32_t, uint32_t, const std::string&) override { ++metrics; }
  void on_raw_name(uint32_t, const std::string&, const std::string&) override {}
  void on_segment(uint32_t, const rldk::Segment&) override { ++segments; }
  void on_point(uint32_t, uint32_t, const rldk::Point& p) override {
    ++points;
    if (std::isfinite(p.value)) {
      sum += p.value;
    } else {
      ++non_finite;
    }
    step_sum += p.step;
  }
  void on_meta(uint32_t, const std::string&, const std::string&) override {}
};

// getrusage's ru_maxrss survives execve on Linux: started from a large parent (the Python driver) it reports the
// parent's peak, not ours. VmHWM in /proc/self/status is the peak of this process image; ru_maxrss is the fallback.
long rusage_max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

long peak_rss_kib() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    }
    std::fclose(f);
    if (kib >= 0) return kib;
  }
  return rusage_max_rss_kib();
}

std::string json_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_read FILE\n");
    return 2;
  }
  std::string path = argv[1];
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "bench_read: cannot stat %s\n", path.c_str());
    return 2;
  }
  CountingSink sink;
  rldk::Diagnostics diagnostics;
  auto start = std::chrono::steady_clock::now();
  rldk::Status status = rldk::read_source(path, rldk::ReadOptions{}, sink, diagnostics);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!status.ok()) {
    std::fprintf(stderr, "bench_read: %s\n", rldk::to_string(status.error()).c_str());
    return 1;
  }
  auto bytes = static_cast<double>(st.st_size);
  auto u64 = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("{\"file\": \"%s\", \"bytes\": %lld, \"events\": %llu, \"seconds\": %.6f, ", json_escaped(path).c_str(),
              static_cast<long long>(st.st_size), u64(sink.points), seconds);
  std::printf("\"events_per_s\": %.1f, \"mb_per_s\": %.2f, \"peak_rss_kib\": %ld, \"ru_maxrss_kib\": %ld, ",
              static_cast<double>(sink.points) / seconds, bytes / 1e6 / seconds, peak_rss_kib(), rusage_max_rss_kib());
  std::printf("\"runs\": %llu, \"metrics\": %llu, \"segments\": %llu, \"non_finite\": %llu, \"diagnostics\": %llu, ",
              u64(sink.runs), u64(sink.metrics), u64(sink.segments), u64(sink.non_finite), u64(diagnostics.total()));
  std::printf("\"value_sum\": %.17g, \"step_sum\": %lld}\n", sink.sum, static_cast<long long>(sink.step_sum));
  return 0;
}
