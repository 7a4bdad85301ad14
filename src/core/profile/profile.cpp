// The analysis behind `rldk profile`: memory trends with a leak test, the step-time breakdown, throughput drops,
// tokens/s and MFU, from the metrics a run logged. Statistics come from src/core/stats (least squares, medians).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "rldk/profile.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk {
namespace {

// Previous values a throughput point is compared with (their median): long enough to ride out noise, short
// enough to follow a run whose throughput changes for good (e.g. longer sequences later in training).
constexpr size_t DROP_BASELINE_POINTS = 50;
constexpr size_t DROP_MIN_BASELINE = 5;
constexpr size_t MAX_DROPS_LISTED = 20;
// Fewer points than this cannot tell a linear rise from a plateau.
constexpr size_t MIN_TREND_POINTS = 9;
constexpr double BYTES_PER_GB = 1024.0 * 1024.0 * 1024.0;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool wants(const ProfileOptions& options, const char* part) {
  if (options.parts.empty()) return true;
  for (const auto& p : options.parts) {
    std::string l = lower(p);
    if (std::string(part) == "memory" && (l == "memory" || l == "memory_usage" || l == "mem")) return true;
    if (std::string(part) == "time" &&
        (l == "time" || l == "compute_time" || l == "step_time" || l == "throughput" || l == "timing")) {
      return true;
    }
  }
  return false;
}

bool is_memory_metric(const std::string& name) {
  std::string l = lower(name);
  return l.find("mem") != std::string::npos || l.find("rss") != std::string::npos;
}

// GB per logged unit: from the name when it says (…_gb, …_mb, …bytes, sys/* samples are bytes), else from the
// size of the values (a trainer logging 8e9 logs bytes; 8000, megabytes; 8, gigabytes).
double gb_per_unit(const std::string& name, const std::vector<double>& values) {
  std::string l = lower(name);
  if (l.ends_with("_gb") || l.ends_with("gb")) return 1.0;
  if (l.ends_with("_mb") || l.ends_with("mb")) return 1.0 / 1024.0;
  if (l.find("bytes") != std::string::npos || l.starts_with("sys/")) return 1.0 / BYTES_PER_GB;
  std::vector<double> finite;
  for (double v : values) {
    if (std::isfinite(v)) finite.push_back(std::fabs(v));
  }
  if (finite.empty()) return 1.0;
  double typical = stats::median_in_place(finite);
  if (typical > 1e6) return 1.0 / BYTES_PER_GB;
  if (typical > 1024) return 1.0 / 1024.0;
  return 1.0;
}

double per_1k(double slope_per_step) { return slope_per_step * 1000.0; }

MemoryTrend memory_trend(const Series& s, const ProfileOptions& options) {
  MemoryTrend t;
  t.metric = s.name;
  double scale = gb_per_unit(s.name, s.values);
  std::vector<double> x, y;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isfinite(s.values[i])) continue;
    x.push_back(static_cast<double>(s.steps[i]));
    y.push_back(s.values[i] * scale);
    t.steps.push_back(s.steps[i]);
    t.values_gb.push_back(s.values[i] * scale);
  }
  t.points = y.size();
  if (y.empty()) {
    t.shape = "flat";
    t.reason = "no finite value logged";
    return t;
  }
  t.first_step = t.steps.front();
  t.last_step = t.steps.back();
  t.first_gb = y.front();
  t.last_gb = y.back();
  t.peak_gb = *std::max_element(y.begin(), y.end());
  if (y.size() < MIN_TREND_POINTS) {
    t.shape = "flat";
    t.reason = "too few points (" + std::to_string(y.size()) + ") to fit a trend";
    return t;
  }
  stats::LinearFit whole = stats::linear_fit(x, y);
  size_t late_start = y.size() - y.size() / 3;
  stats::LinearFit late = stats::linear_fit(std::span<const double>(x).subspan(late_start),
                                            std::span<const double>(y).subspan(late_start));
  t.growth_gb_per_1k_steps = std::isfinite(whole.slope) ? per_1k(whole.slope) : 0.0;
  t.slope_p_value = std::isfinite(whole.p_value) ? whole.p_value : 1.0;
  t.late_growth_gb_per_1k_steps = std::isfinite(late.slope) ? per_1k(late.slope) : 0.0;
  double span = x.back() - x.front();
  double growth = whole.slope * span;
  if (!(growth >= options.leak_min_growth_gb) || !(t.slope_p_value < options.leak_p_value)) {
    t.shape = "flat";
    t.reason = "no significant rise (fitted change over the run " + std::to_string(std::isfinite(growth) ? growth : 0.0) +
               " GB)";
    return t;
  }
  // Still rising at the end at a good part of the whole run's rate: a leak. Rose, then levelled: warm-up
  // (allocator caches, compiled kernels), not a leak.
  bool late_rising = std::isfinite(late.slope) && late.slope >= options.plateau_ratio * whole.slope &&
                     std::isfinite(late.p_value) && late.p_value < options.leak_p_value;
  if (!late_rising) {
    t.shape = "plateau";
    t.reason = "rose, then levelled off: the last third grows at " +
               std::to_string(t.late_growth_gb_per_1k_steps) + " GB per 1k steps";
    return t;
  }
  t.shape = "linear";
  t.leak = true;
  t.reason = "still growing linearly in the last third of the run";
  if (std::isfinite(options.memory_limit_gb) && whole.slope > 0) {
    t.steps_to_limit = std::max(0.0, (options.memory_limit_gb - t.last_gb) / whole.slope);
  }
  return t;
}

// NaN/Inf are observations in a run, but they carry no time or throughput to average.
double finite_mean(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double v : values) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  return finite.empty() ? std::numeric_limits<double>::quiet_NaN() : stats::mean(finite);
}

bool is_time_part(const std::string& name) {
  return name.starts_with("timing_s/") || name.starts_with("timing/") || name.starts_with("time/") ||
         name.starts_with("timers/") || name.starts_with("timing_per_token_ms/");
}

void time_breakdown(const Run& run, ProfileReport& report) {
  for (const char* name : {"perf/step_time", "compute_time", "step_time", "time_per_step"}) {
    if (const Series* s = run.find(name)) {
      report.step_time_metric = name;
      report.mean_step_seconds = finite_mean(s->values);
      break;
    }
  }
  double parts_sum = 0;
  for (const auto& [name, s] : run.series) {
    if (!is_time_part(name) || name.starts_with("timing_per_token_ms/")) continue;
    double m = finite_mean(s.values);
    if (!std::isfinite(m)) continue;
    report.time_parts.push_back(TimePart{name, m, 0});
    parts_sum += m;
  }
  double whole = std::isfinite(report.mean_step_seconds) && report.mean_step_seconds > 0 ? report.mean_step_seconds
                                                                                          : parts_sum;
  for (auto& p : report.time_parts) p.share = whole > 0 ? p.mean_seconds / whole : 0;
  std::sort(report.time_parts.begin(), report.time_parts.end(),
            [](const TimePart& a, const TimePart& b) { return a.mean_seconds > b.mean_seconds; });
  if (report.step_time_metric.empty() && report.time_parts.empty()) {
    report.notes.push_back("no step time logged (verl timing_s/*, TRL step_time, OpenRLHF timing/*)");
  }
}

void throughput(const Run& run, const ProfileOptions& options, ProfileReport& report) {
  const Series* s = run.find("perf/throughput");
  if (s == nullptr) {
    for (const auto& [name, series] : run.series) {
      // The trainer's closing summary (summary/train_samples_per_second) is one number for the whole run.
      if (name.rfind("summary/", 0) == 0) continue;
      std::string l = lower(name);
      if (l.find("throughput") != std::string::npos || l.find("tokens_per_second") != std::string::npos ||
          l.find("samples_per_second") != std::string::npos) {
        s = &series;
        break;
      }
    }
  }
  if (s != nullptr) {
    report.throughput_metric = s->name;
    report.mean_throughput = finite_mean(s->values);
    std::vector<double> previous, scratch;
    bool in_drop = false;
    for (size_t i = 0; i < s->size(); ++i) {
      double v = s->values[i];
      if (!std::isfinite(v)) continue;
      if (previous.size() >= DROP_MIN_BASELINE) {
        size_t from = previous.size() > DROP_BASELINE_POINTS ? previous.size() - DROP_BASELINE_POINTS : 0;
        scratch.assign(previous.begin() + static_cast<std::ptrdiff_t>(from), previous.end());
        double baseline = stats::median_in_place(scratch);
        bool drop = baseline > 0 && v < (1.0 - options.drop_fraction) * baseline;
        // A drop that lasts several points is one episode, listed at its first step.
        if (drop && !in_drop && report.drops.size() < MAX_DROPS_LISTED) report.drops.push_back({s->steps[i], v, baseline});
        in_drop = drop;
        if (drop) continue;  // a dropped point does not lower the baseline it is judged against
      }
      previous.push_back(v);
    }
  } else {
    report.notes.push_back("no throughput logged (perf/throughput, tokens_per_second, samples_per_second)");
  }
  // Tokens/s: logged, or tokens per step over the step time.
  if (!report.throughput_metric.empty() && lower(report.throughput_metric).find("samples") == std::string::npos) {
    report.tokens_per_second = report.mean_throughput;
  } else if (std::isfinite(options.tokens_per_step) && std::isfinite(report.mean_step_seconds) &&
             report.mean_step_seconds > 0) {
    report.tokens_per_second = options.tokens_per_step / report.mean_step_seconds;
  }
  if (const Series* mfu = run.find("perf/mfu")) {
    report.mfu = finite_mean(mfu->values);
  } else if (std::isfinite(options.model_params) && std::isfinite(options.peak_flops) &&
             std::isfinite(report.tokens_per_second) && options.peak_flops > 0) {
    // Training costs about 6 FLOPs per parameter per token (forward 2, backward 4).
    report.mfu = 6.0 * options.model_params * report.tokens_per_second / options.peak_flops;
  } else {
    report.notes.push_back("MFU needs --model-params and --peak-flops (and tokens/s: logged, or --tokens-per-step "
                           "with a logged step time)");
  }
}

}  // namespace

bool ProfileReport::leak() const {
  return std::any_of(memory.begin(), memory.end(), [](const MemoryTrend& m) { return m.leak; });
}

ProfileReport profile_run(const Run& run, const ProfileOptions& options) {
  ProfileReport report;
  report.options = options;
  report.source = run.source.path;
  report.run_id = run.run_id;
  if (wants(options, "memory")) {
    for (const auto& [name, s] : run.series) {
      if (is_memory_metric(name)) report.memory.push_back(memory_trend(s, options));
    }
    if (report.memory.empty()) {
      report.notes.push_back("no memory metric logged (perf/*memory*, memory_usage, sys/rss from rldk monitor --cmd)");
    }
  }
  if (wants(options, "time")) {
    time_breakdown(run, report);
    throughput(run, options, report);
  }
  return report;
}

}  // namespace rldk
