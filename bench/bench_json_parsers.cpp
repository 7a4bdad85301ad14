// bench_json_parsers FILE...: the JSON-lines scanner (io/lenient_json.h) against simdjson (io/strict_json.h) on the
// lines of each file, in memory (no I/O, no interpretation), one core.
//
// Two jobs. A check: on every line simdjson accepts, both parsers must give the same fields; the first disagreement
// is printed with its file:line and the exit status is 1. A measurement: the time each parser takes over all lines
// (best of --repeat), which is why the scanner, not simdjson, is on rldk's hot path. One JSON object per file.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "io/lenient_json.h"
#include "io/strict_json.h"

namespace {

using rldk::io::FlatRecord;

template <class F>
double best_seconds(int repeat, F f) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      paths.emplace_back(argv[i]);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: bench_json_parsers [--repeat N] FILE...\n");
    return 2;
  }
  int status = 0;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "bench_json_parsers: cannot open %s\n", path.c_str());
      return 2;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string_view> lines;
    for (size_t begin = 0; begin < text.size();) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      lines.emplace_back(text.data() + begin, end - begin);
      begin = end + 1;
    }
    // The check.
    FlatRecord scanner, reference;
    size_t compared = 0;
    for (size_t i = 0; i < lines.size() && status == 0; ++i) {
      rldk::io::ParseError error;
      const bool ok = rldk::io::parse_flat_object(lines[i], scanner, error);
      if (!rldk::io::parse_strict_flat_object(lines[i], reference)) continue;
      ++compared;
      if (!ok || !rldk::io::same_fields(scanner, reference)) {
        std::fprintf(stderr, "%s:%zu: the scanner and simdjson disagree on this line\n", path.c_str(), i + 1);
        status = 1;
      }
    }
    // The measurement: fields read, summed so that nothing is optimised away.
    double sink = 0.0;
    const double scanner_s = best_seconds(repeat, [&] {
      rldk::io::ParseError error;
      for (auto line : lines) {
        if (rldk::io::parse_flat_object(line, scanner, error)) sink += static_cast<double>(scanner.fields.size());
      }
    });
    const double simdjson_s = best_seconds(repeat, [&] {
      for (auto line : lines) {
        if (rldk::io::parse_strict_flat_object(line, reference)) sink += static_cast<double>(reference.fields.size());
      }
    });
    const double mb = static_cast<double>(text.size()) / 1e6;
    std::printf("{\"file\": \"%s\", \"lines\": %zu, \"compared\": %zu, \"agree\": %s, \"mb\": %.2f, "
                "\"scanner_s\": %.6f, \"scanner_mb_per_s\": %.1f, \"simdjson_s\": %.6f, \"simdjson_mb_per_s\": %.1f, "
                "\"fields\": %.0f}\n",
                path.c_str(), lines.size(), compared, status == 0 ? "true" : "false", mb, scanner_s, mb / scanner_s,
                simdjson_s, mb / simdjson_s, sink / 2 / repeat);
  }
  return status;
}
