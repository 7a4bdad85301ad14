// Helpers shared by the unit tests: reading text through StreamReader, comparing series with NaN-aware equality,
// comparing whole runs, and temporary directories.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/reader.h"
#include "rldk/run.h"

namespace rldk_test {

inline constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double INF = std::numeric_limits<double>::infinity();

// Equal, or both NaN (sign of zero ignored; infinities compare by sign).
inline bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

struct ReadOutput {
  std::vector<rldk::Run> runs;
  rldk::Diagnostics diagnostics;
  rldk::Format format = rldk::Format::unknown;
  std::string detail;
  uint64_t lines = 0;
  uint64_t points = 0;
};

// Feeds `text` into a StreamReader `chunk` bytes at a time (0: all at once) and collects the runs.
inline ReadOutput read_text(std::string_view text, const std::string& path = "run.log", size_t chunk = 0,
                            rldk::ReadOptions options = {}) {
  if (options.run_id.empty()) options.run_id = "run";
  ReadOutput out;
  rldk::RunBuilder builder;
  {
    rldk::StreamReader reader(rldk::SourceInfo{path, "", ""}, options, builder, out.diagnostics);
    if (chunk == 0) {
      reader.feed(text);
    } else {
      for (size_t i = 0; i < text.size(); i += chunk) reader.feed(text.substr(i, chunk));
    }
    reader.finish();
    out.format = reader.format();
    out.detail = reader.format_detail();
    out.lines = reader.lines();
    out.points = reader.points();
  }
  out.runs = builder.take();
  return out;
}

// Feeds `text` in pieces of random sizes (1..max_piece bytes).
inline ReadOutput read_text_random_chunks(std::string_view text, const std::string& path, unsigned seed,
                                          size_t max_piece) {
  rldk::ReadOptions options;
  options.run_id = "run";
  ReadOutput out;
  rldk::RunBuilder builder;
  {
    rldk::StreamReader reader(rldk::SourceInfo{path, "", ""}, options, builder, out.diagnostics);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> size(1, max_piece);
    for (size_t i = 0; i < text.size();) {
      size_t n = std::min(size(rng), text.size() - i);
      reader.feed(text.substr(i, n));
      i += n;
    }
    reader.finish();
    out.format = reader.format();
    out.detail = reader.format_detail();
    out.lines = reader.lines();
    out.points = reader.points();
  }
  out.runs = builder.take();
  return out;
}

// The one run of a result; fails the test when there is not exactly one.
inline const rldk::Run& only_run(const ReadOutput& out) {
  static const rldk::Run EMPTY;
  EXPECT_EQ(out.runs.size(), 1u) << "expected exactly one run";
  return out.runs.empty() ? EMPTY : out.runs.front();
}

inline std::string names_of(const rldk::Run& run) {
  std::string out;
  for (const auto& [name, s] : run.series) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Checks that `run` has a series `name` with exactly these steps and values.
inline ::testing::AssertionResult has_series(const rldk::Run& run, const std::string& name,
                                             const std::vector<int64_t>& steps, const std::vector<double>& values) {
  const rldk::Series* s = run.find(name);
  if (s == nullptr) return ::testing::AssertionFailure() << "no series '" << name << "' (have: " << names_of(run) << ")";
  if (s->steps != steps) {
    auto f = ::testing::AssertionFailure() << "series '" << name << "' steps differ: got [";
    for (auto v : s->steps) f << v << " ";
    return f << "]";
  }
  if (s->values.size() != values.size()) {
    return ::testing::AssertionFailure() << "series '" << name << "' has " << s->values.size() << " values, expected "
                                         << values.size();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!same_value(s->values[i], values[i])) {
      return ::testing::AssertionFailure() << "series '" << name << "' value " << i << " is " << s->values[i]
                                           << ", expected " << values[i];
    }
  }
  if (s->wall_times.size() != steps.size() || s->segments.size() != steps.size()) {
    return ::testing::AssertionFailure() << "series '" << name << "' columns have different lengths";
  }
  return ::testing::AssertionSuccess();
}

// Full structural equality of two runs (values NaN-aware).
inline ::testing::AssertionResult same_run(const rldk::Run& a, const rldk::Run& b) {
  if (a.run_id != b.run_id) return ::testing::AssertionFailure() << "run ids differ: " << a.run_id << " vs " << b.run_id;
  if (a.source.path != b.source.path || a.source.format != b.source.format ||
      a.source.compression != b.source.compression) {
    return ::testing::AssertionFailure() << "sources differ";
  }
  if (a.raw_to_canonical != b.raw_to_canonical) return ::testing::AssertionFailure() << "raw_to_canonical differs";
  if (a.meta != b.meta) return ::testing::AssertionFailure() << "meta differs";
  if (a.segments.size() != b.segments.size()) return ::testing::AssertionFailure() << "segment counts differ";
  for (size_t i = 0; i < a.segments.size(); ++i) {
    const auto &x = a.segments[i], &y = b.segments[i];
    if (x.index != y.index || x.first_step != y.first_step || x.last_step != y.last_step ||
        x.start_line != y.start_line) {
      return ::testing::AssertionFailure() << "segment " << i << " differs";
    }
  }
  if (a.series.size() != b.series.size()) {
    return ::testing::AssertionFailure() << "series differ: [" << names_of(a) << "] vs [" << names_of(b) << "]";
  }
  for (const auto& [name, s] : a.series) {
    const rldk::Series* t = b.find(name);
    if (t == nullptr) return ::testing::AssertionFailure() << "series '" << name << "' missing";
    if (s.steps != t->steps || s.segments != t->segments || s.values.size() != t->values.size() ||
        s.wall_times.size() != t->wall_times.size()) {
      return ::testing::AssertionFailure() << "series '" << name << "' differs in steps or segments";
    }
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (!same_value(s.values[i], t->values[i]) || !same_value(s.wall_times[i], t->wall_times[i])) {
        return ::testing::AssertionFailure() << "series '" << name << "' differs at point " << i;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult same_diagnostics(const rldk::Diagnostics& a, const rldk::Diagnostics& b) {
  if (a.counts() != b.counts()) return ::testing::AssertionFailure() << "diagnostic counts differ";
  if (a.examples().size() != b.examples().size()) return ::testing::AssertionFailure() << "example counts differ";
  for (size_t i = 0; i < a.examples().size(); ++i) {
    const auto &x = a.examples()[i], &y = b.examples()[i];
    if (x.kind != y.kind || x.file != y.file || x.line != y.line || x.message != y.message) {
      return ::testing::AssertionFailure() << "example " << i << " differs: " << rldk::to_string(x) << " vs "
                                           << rldk::to_string(y);
    }
  }
  return ::testing::AssertionSuccess();
}

// Line numbers of the examples of one kind, in order.
inline std::vector<uint64_t> lines_of(const rldk::Diagnostics& d, const std::string& kind) {
  std::vector<uint64_t> out;
  for (const auto& e : d.examples()) {
    if (e.kind == kind) out.push_back(e.line);
  }
  return out;
}

inline uint64_t count_of(const rldk::Diagnostics& d, const std::string& kind) {
  auto it = d.counts().find(kind);
  return it == d.counts().end() ? 0 : it->second;
}

// A fresh directory under the system temp dir, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    auto base = std::filesystem::temp_directory_path();
    std::random_device rd;
    for (;;) {
      path_ = base / ("rldk_unit_" + std::to_string(rd()));
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(const std::string& relative = "") const {
    return relative.empty() ? path_.string() : (path_ / relative).string();
  }

  // Writes `bytes` to `relative`, creating parent folders; returns the full path.
  std::string write(const std::string& relative, std::string_view bytes) const {
    std::filesystem::path p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace rldk_test
