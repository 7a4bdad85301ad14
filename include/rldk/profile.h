// rldk profile: the compute side of a run from its log — is memory leaking (and when will it run out), where does
// a step's time go, did throughput drop, and (given model size and hardware) tokens/s and MFU. Works on what the
// trainer logged, plus the sys/* samples `rldk monitor --cmd` adds from the trainer's process tree.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "rldk/json.h"
#include "rldk/run.h"

namespace rldk {

inline constexpr const char* PROFILE_SCHEMA = "rldk.profile/v1";

struct ProfileOptions {
  // Which parts to report: "memory" and "time" (the older tool's memory_usage and compute_time too); empty: all.
  std::vector<std::string> parts;
  double memory_limit_gb = std::numeric_limits<double>::quiet_NaN();  // project the steps left until this
  // A leak is a rise of at least this many GB over the run, significant (slope p below leak_p_value), that is
  // still rising in the last third of the run at no less than plateau_ratio of the whole run's rate.
  double leak_min_growth_gb = 0.25;
  double leak_p_value = 0.01;
  double plateau_ratio = 0.3;
  // A throughput drop: a logged value below (1 - drop_fraction) of the median of the values before it.
  double drop_fraction = 0.3;
  // Tokens/s and MFU: tokens processed per step, model parameters and the hardware's peak FLOP/s (all GPUs).
  double tokens_per_step = std::numeric_limits<double>::quiet_NaN();
  double model_params = std::numeric_limits<double>::quiet_NaN();
  double peak_flops = std::numeric_limits<double>::quiet_NaN();
};

struct MemoryTrend {
  std::string metric;
  size_t points = 0;
  int64_t first_step = 0, last_step = 0;
  double first_gb = 0, last_gb = 0, peak_gb = 0;
  double growth_gb_per_1k_steps = 0;       // least-squares slope over the whole run
  double slope_p_value = 1;
  double late_growth_gb_per_1k_steps = 0;  // the same over the last third
  std::string shape;                       // "linear" (still rising), "plateau" (rose, then levelled), "flat"
  bool leak = false;
  std::optional<double> steps_to_limit;    // at the whole-run rate, from the last step, when a limit is given
  std::string reason;                      // one sentence for a person
  std::vector<int64_t> steps;              // for the plot
  std::vector<double> values_gb;
};

struct TimePart {
  std::string metric;
  double mean_seconds = 0;
  double share = 0;  // of the mean step time (or of the parts' sum when no total is logged)
};

struct ThroughputDrop {
  int64_t step = 0;
  double value = 0;
  double baseline = 0;  // median of the values before it
};

struct ProfileReport {
  std::string source;
  std::string run_id;
  std::vector<MemoryTrend> memory;
  std::string step_time_metric;            // the total step time, when logged
  double mean_step_seconds = std::numeric_limits<double>::quiet_NaN();
  std::vector<TimePart> time_parts;        // verl timing_s/*, OpenRLHF timing/*, ... largest first
  std::string throughput_metric;
  double mean_throughput = std::numeric_limits<double>::quiet_NaN();
  std::vector<ThroughputDrop> drops;
  double tokens_per_second = std::numeric_limits<double>::quiet_NaN();
  double mfu = std::numeric_limits<double>::quiet_NaN();  // 6 * params * tokens/s / peak FLOP/s
  std::vector<std::string> notes;          // what could not be measured, and why
  ProfileOptions options;
  bool leak() const;
};

ProfileReport profile_run(const Run& run, const ProfileOptions& options = {});

Json profile_json(const ProfileReport& report);
std::string profile_markdown(const ProfileReport& report);
// Compute card: verdict, memory plots with their fitted rates, the step-time breakdown as bars, throughput plot.
std::string profile_html(const ProfileReport& report, const Run& run);

}  // namespace rldk
