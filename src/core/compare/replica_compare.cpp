// Per-step comparison of replicas of one run: bitwise or within tolerances, with per-step spread.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "rldk/compare.h"
#include "rldk/determinism.h"

namespace rldk {
namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

// Bits of a double mapped onto an ordered integer line, so that adjacent doubles are adjacent integers.
int64_t ordered_bits(double x) {
  int64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? std::numeric_limits<int64_t>::min() - bits : bits;
}

bool values_match(double ref, double x, const ReplicaCompareOptions& options) {
  if (std::isnan(ref) || std::isnan(x)) return std::isnan(ref) && std::isnan(x);
  if (options.bitwise) return std::memcmp(&ref, &x, sizeof ref) == 0;
  if (std::isinf(ref) || std::isinf(x)) return ref == x;
  return std::fabs(x - ref) <= options.atol + options.rtol * std::fabs(ref);
}

// Value at `step` or NaN, with `found` telling a logged NaN from a missing step.
double lookup(const StepValues& v, int64_t step, bool& found) {
  auto it = std::lower_bound(v.steps.begin(), v.steps.end(), step);
  found = it != v.steps.end() && *it == step;
  return found ? v.values[static_cast<size_t>(it - v.steps.begin())] : NaN;
}

}  // namespace

uint64_t ulp_distance(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<uint64_t>::max();
  int64_t x = ordered_bits(a), y = ordered_bits(b);
  return x > y ? static_cast<uint64_t>(x) - static_cast<uint64_t>(y) : static_cast<uint64_t>(y) - static_cast<uint64_t>(x);
}

bool ReplicaComparison::passed() const {
  return errors.empty() && std::all_of(metrics.begin(), metrics.end(), [](const auto& m) { return m.passed(); });
}

ReplicaComparison compare_replicas(const std::vector<Run>& replicas, const ReplicaCompareOptions& options) {
  ReplicaComparison out;
  if (replicas.size() < 2) {
    out.errors.push_back("at least two runs are needed to compare, got " + std::to_string(replicas.size()));
    return out;
  }
  std::set<int64_t> wanted(options.steps.begin(), options.steps.end());
  for (const auto& name : options.metrics) {
    std::vector<StepValues> values;
    bool complete = true;
    for (size_t r = 0; r < replicas.size(); ++r) {
      const Series* s = replicas[r].find(name);
      if (!s || s->size() == 0) {
        out.errors.push_back((r == 0 ? std::string("reference") : "replica " + std::to_string(r)) +
                             " logged no values of " + name);
        complete = false;
        break;
      }
      values.push_back(step_values(*s));
    }
    if (!complete) continue;

    MetricReplicaComparison m;
    m.name = name;
    m.values.resize(replicas.size());
    // The reference's steps, plus any step another replica logged that the reference did not (that is a difference
    // too, unless only common steps are compared).
    std::set<int64_t> steps(values[0].steps.begin(), values[0].steps.end());
    if (!options.common_steps_only) {
      for (size_t r = 1; r < values.size(); ++r) steps.insert(values[r].steps.begin(), values[r].steps.end());
    }
    for (int64_t step : steps) {
      if (!wanted.empty() && !wanted.count(step)) continue;
      std::vector<double> row(values.size());
      std::vector<bool> found(values.size());
      for (size_t r = 0; r < values.size(); ++r) {
        bool f = false;
        row[r] = lookup(values[r], step, f);
        found[r] = f;
      }
      if (options.common_steps_only && std::find(found.begin(), found.end(), false) != found.end()) continue;
      m.steps.push_back(step);
      for (size_t r = 0; r < values.size(); ++r) m.values[r].push_back(row[r]);
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      bool any_nan = false;
      for (size_t r = 0; r < values.size(); ++r) {
        if (!found[r]) continue;
        if (std::isnan(row[r])) any_nan = true;
        lo = std::min(lo, row[r]);
        hi = std::max(hi, row[r]);
      }
      m.spread.push_back(any_nan ? NaN : hi - lo);
      bool divergent = false;
      for (size_t r = 1; r < values.size(); ++r) {
        // Deviations are measured whether or not they are within the tolerance: the report shows how close a
        // passing check came.
        if (found[0] && found[r] && std::isfinite(row[0]) && std::isfinite(row[r])) {
          double dev = std::fabs(row[r] - row[0]);
          if (dev > m.max_abs_deviation) {
            m.max_abs_deviation = dev;
            m.max_deviation_step = step;
            m.max_deviation_replica = r;
          }
          if (row[0] != 0.0) m.max_rel_deviation = std::max(m.max_rel_deviation, dev / std::fabs(row[0]));
          m.max_ulp = std::max(m.max_ulp, ulp_distance(row[0], row[r]));
        }
        std::string reason;
        if (found[0] != found[r]) {
          reason = "missing";
        } else if (!values_match(row[0], row[r], options)) {
          reason = "value";
        }
        if (reason.empty()) continue;
        divergent = true;
        if (!m.first_divergent_step) {
          m.first_divergent_step = step;
          m.first_divergent_replica = r;
          m.first_divergent_reason = reason;
        }
      }
      if (divergent) ++m.divergent_steps;
    }
    m.steps_compared = m.steps.size();
    if (m.steps_compared == 0) {
      out.errors.push_back("no step of " + name + " to compare" +
                           (options.steps.empty() ? std::string() : " among the requested --steps"));
    }
    out.metrics.push_back(std::move(m));
  }
  if (options.metrics.empty()) out.errors.push_back("no metric to compare");
  return out;
}

Result<Run> load_replica_metrics(const ReplicaOutcome& outcome, const ReadOptions& read) {
  std::error_code ec;
  for (const std::string& path : {outcome.metrics_path, outcome.stdout_path}) {
    if (path.empty() || !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) continue;
    ReadOptions options = read;
    if (options.run_id.empty()) options.run_id = "replica_" + std::to_string(outcome.index);
    auto runs = read_runs(path, options);
    if (!runs.ok() || runs->empty()) continue;
    Run run = merge_runs(std::move(runs.value()));
    if (run.point_count() == 0) continue;
    return run;
  }
  return Error{ErrorCode::unrecognized,
               "replica " + std::to_string(outcome.index) +
                   " logged no metrics (nothing readable in its RLDK_METRICS_PATH file or on stdout)",
               outcome.work_dir};
}

std::vector<std::string> default_replica_metrics(const std::vector<Run>& replicas) {
  std::vector<std::string> names;
  if (replicas.empty()) return names;
  auto in_all = [&](const std::string& name) {
    return std::all_of(replicas.begin(), replicas.end(), [&](const Run& r) { return r.find(name) != nullptr; });
  };
  for (const auto& n : diff_default_signals()) {
    if (in_all(n)) names.push_back(n);
  }
  if (names.empty()) {
    for (const auto& [n, s] : replicas.front().series) {
      if (in_all(n)) names.push_back(n);
    }
  }
  return names;
}

}  // namespace rldk
