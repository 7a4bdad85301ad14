// The predicate `git bisect run` calls at each commit: run the user's command, read the metric it logged, judge.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

#include "rldk/bisect.h"
#include "rldk/diagnostics.h"
#include "rldk/metric_dictionary.h"
#include "rldk/reader.h"
#include "run_capture.h"

namespace rldk {
namespace {

// Console output kept for the fallback reader; a trainer that prints more has its metrics in the last part anyway.
constexpr size_t MAX_CONSOLE_BYTES = size_t{64} << 20;

const Series* find_series(const Run& run, const std::string& metric) {
  if (auto it = run.series.find(metric); it != run.series.end()) return &it->second;
  if (auto raw = run.raw_to_canonical.find(metric); raw != run.raw_to_canonical.end()) {
    if (auto it = run.series.find(raw->second); it != run.series.end()) return &it->second;
  }
  std::string canonical = MetricDictionary::builtin().canonical_name(metric);
  if (auto it = run.series.find(canonical); it != run.series.end()) return &it->second;
  return nullptr;
}

Result<std::pair<double, size_t>> aggregate(const std::vector<Run>& runs, const std::string& metric, size_t window,
                                            const std::string& where) {
  // The last run that logged the metric: a log with several runs is usually one run restarted.
  const Series* series = nullptr;
  for (const auto& run : runs) {
    if (const Series* s = find_series(run, metric); s != nullptr && s->size() > 0) series = s;
  }
  if (series == nullptr) {
    std::string seen;
    for (const auto& run : runs) {
      for (const auto& [name, s] : run.series) seen += (seen.empty() ? "" : ", ") + name;
    }
    return Error{ErrorCode::not_found,
                 "metric '" + metric + "' not logged" + (seen.empty() ? "" : " (found: " + seen + ")"), where};
  }
  size_t n = std::min(window, series->size());
  double sum = 0.0;
  for (size_t i = series->size() - n; i < series->size(); ++i) sum += series->values[i];
  return std::make_pair(sum / static_cast<double>(n), n);
}

std::string git_head(const std::string& dir) {
  sys::CaptureOptions capture;
  capture.timeout = std::chrono::seconds(30);
  capture.working_directory = dir;
  auto head = sys::run_capture("git rev-parse HEAD", capture);
  if (!head.ok() || !head->status.success()) return "";
  std::string sha = head->out;
  while (!sha.empty() && (sha.back() == '\n' || sha.back() == '\r')) sha.pop_back();
  return sha;
}

std::string format_value(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

void append_log(const PredicateOptions& options, const PredicateOutcome& outcome) {
  if (options.log_path.empty()) return;
  std::ofstream log(options.log_path, std::ios::app);
  log << "predicate " << (outcome.commit.empty() ? std::string("(no commit)") : outcome.commit.substr(0, 12)) << ": "
      << verdict_name(outcome.verdict) << " — " << outcome.reason << "\n";
}

// A fresh, empty file for the command's metrics; its path, or empty when no temporary file can be made.
std::string make_metrics_file() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rldk-bisect-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return "";
  ::close(fd);
  std::string path(name.data());
  return path + (::rename(path.c_str(), (path + ".jsonl").c_str()) == 0 ? ".jsonl" : "");
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::good: return "good";
    case Verdict::bad: return "bad";
    case Verdict::skip: return "skip";
  }
  return "skip";
}

int PredicateOutcome::exit_code() const {
  if (aborted) return BISECT_ABORT;
  switch (verdict) {
    case Verdict::good: return BISECT_GOOD;
    case Verdict::bad: return BISECT_BAD;
    case Verdict::skip: return BISECT_SKIP;
  }
  return BISECT_SKIP;
}

Result<std::pair<double, size_t>> read_metric_aggregate(const std::string& source, const std::string& metric,
                                                        size_t window) {
  auto runs = read_runs(source);
  if (!runs.ok()) return runs.error();
  return aggregate(runs.value(), metric, window, source);
}

PredicateOutcome evaluate_bisect_predicate(const PredicateOptions& options) {
  PredicateOutcome outcome;
  std::string dir = options.working_directory;
  outcome.commit = git_head(dir.empty() ? "." : dir);
  bool temporary = options.metrics_path.empty();
  std::string metrics = temporary ? make_metrics_file() : options.metrics_path;
  if (!temporary) std::remove(metrics.c_str());  // a file left by the previous commit must not be read as this one's
  sys::CaptureOptions capture;
  capture.timeout = options.timeout;
  capture.working_directory = dir;
  capture.max_output_bytes = MAX_CONSOLE_BYTES;
  capture.forward_signals = true;  // Ctrl-C during a bisect must stop the trainer too, not orphan it
  if (!metrics.empty()) capture.environment.emplace_back("RLDK_METRICS_PATH", metrics);
  auto ran = sys::run_capture(options.command, capture);
  auto finish = [&](Verdict verdict, std::string reason) {
    outcome.verdict = verdict;
    outcome.reason = std::move(reason);
    if (temporary && !metrics.empty()) std::remove(metrics.c_str());
    append_log(options, outcome);
    return outcome;
  };
  if (!ran.ok()) return finish(Verdict::skip, "the command could not start: " + ran.error().message);
  if (ran->interrupted) {
    outcome.aborted = true;
    return finish(Verdict::skip, "interrupted; the search stops");
  }
  if (ran->timed_out) {
    return finish(Verdict::skip, "the command ran past " + std::to_string(options.timeout.count()) + " s");
  }
  if (!ran->status.success()) {
    // A commit that does not build or crashes says nothing about the metric: skip it, as `git bisect skip` would.
    return finish(Verdict::skip, "the command failed (" + ran->status.describe() + ")");
  }
  Result<std::pair<double, size_t>> value = Error{ErrorCode::not_found, "", ""};
  struct stat st {};
  if (!metrics.empty() && ::stat(metrics.c_str(), &st) == 0 && st.st_size > 0) {
    value = read_metric_aggregate(metrics, options.metric, options.window);
  } else {
    // No metrics file: read the console output the same way `rldk info -` would.
    RunBuilder builder;
    Diagnostics diagnostics;
    {
      StreamReader reader(SourceInfo{"console", "", ""}, ReadOptions{}, builder, diagnostics);
      reader.feed(ran->out);
      if (!ran->out.empty() && ran->out.back() != '\n') reader.feed("\n");
      reader.feed(ran->err);
      reader.finish();
    }
    value = aggregate(builder.take(), options.metric, options.window, "the command's output");
  }
  if (!value.ok()) return finish(Verdict::skip, to_string(value.error()));
  outcome.value = value->first;
  outcome.points = value->second;
  bool good = options.comparison.holds(value->first);
  std::string reason = "mean of last " + std::to_string(value->second) + " " + options.metric + " = " +
                       format_value(value->first) + (good ? " satisfies " : " fails ") +
                       options.comparison.describe();
  return finish(good ? Verdict::good : Verdict::bad, reason);
}

}  // namespace rldk
