// Kinds that are fixed rules: threshold bounds, GRPO zero-variance groups, learning-rate schedule jumps.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>

#include "detect/kind_support.h"

namespace rldk::detect {
namespace {

// ------------------------------------------------------------------------------------------------ threshold
// Fixed bounds on one or more inputs at the same step (all conditions must hold), sustained for min_points.
class Threshold final : public Detector {
 public:
  explicit Threshold(const DetectorSpec& s) : Detector(s), conditions_(s.conditions, s) {
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 1)), static_cast<int64_t>(s.param("max_gap", 0)));
  }
  void reset() override { finish(); }
  void observe(int64_t step, const double* x) override {
    if (!std::isfinite(x[0])) return;
    bool all = conditions_.all_hold(x);
    double first_value = conditions_.empty() ? NaN : conditions_.value(0, x), excess = 0;
    if (conditions_.holds(0, x)) {
      const ThresholdCondition& c = conditions_.condition(0);
      excess = c.has_above && first_value > c.above ? first_value - c.above : c.below - first_value;
    }
    if (sustained_.feed(step, all, first_value, excess)) emit();
    if (sustained_.confirmed()) alarm(step);
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    std::map<std::string, double> evidence = {{"points", static_cast<double>(e.points)}, {"mean", e.mean()}};
    const ThresholdCondition& c = conditions_.condition(0);
    if (c.has_above) evidence["above"] = c.above;
    if (c.has_below) evidence["below"] = c.below;
    report(e.onset, e.end, e.peak_step, e.peak_value, std::move(evidence));
  }
  Conditions conditions_;
  Sustained sustained_;
};


// ------------------------------------------------------------------------------------------------ zero_variance_groups
// GRPO learns nothing from a group whose rewards are all equal. With binary rewards at success rate p and groups of
// G samples, a fraction p^G + (1-p)^G of groups is expected to be uniform by chance alone; the detector fires when
// the logged fraction exceeds that by `margin` for min_points. That chance level is a floor: prompts differ in
// difficulty, and where many are solved every time or never (multiple-choice questions) 40-60 % of groups are uniform
// in healthy runs at a reward rate of 0.6, against 2 % if every prompt were equally hard. So the fraction must also
// pass min_fraction: most of the batch teaching nothing. When the reward mean is not a rate in [0, 1], the
// expectation is unknown and the fraction is compared with fallback_threshold instead.
class ZeroVarianceGroups final : public Detector {
 public:
  explicit ZeroVarianceGroups(const DetectorSpec& s) : Detector(s) {
    group_size_ = s.param("group_size", 8);
    margin_ = s.param("margin", 0.25);
    min_fraction_ = s.param("min_fraction", 0.0);
    fallback_ = s.param("fallback_threshold", 0.9);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 5)), 0);
  }
  void reset() override { finish(); }
  void observe(int64_t step, const double* x) override {
    double frac = x[0], rate = x[1];
    if (!std::isfinite(frac)) return;
    double expected = NaN, limit = fallback_;
    if (std::isfinite(rate) && rate >= 0 && rate <= 1) {
      expected = std::pow(rate, group_size_) + std::pow(1 - rate, group_size_);
      limit = std::min(std::max(expected + margin_, min_fraction_), 1.0 - 1e-9);
    }
    bool anomalous = frac > limit;
    if (anomalous) {
      if (!sustained_.episode().open) expected_sum_ = 0, rate_sum_ = 0, counted_ = 0;
      if (std::isfinite(expected)) expected_sum_ += expected, rate_sum_ += rate, ++counted_;
    }
    if (sustained_.feed(step, anomalous, frac, frac)) emit();
    if (sustained_.confirmed()) alarm(step);
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    std::map<std::string, double> evidence = {{"zero_std_fraction", e.mean()},
                                              {"group_size", group_size_},
                                              {"points", static_cast<double>(e.points)}};
    // The chance level needs a success rate in [0, 1]; rewards on another scale (several reward functions summed,
    // scores in [-1, 1]) are judged against the fallback threshold, and the text says so instead of printing NaN.
    char clause[160];
    if (counted_ > 0) {
      double expected = expected_sum_ / counted_, rate = rate_sum_ / counted_;
      evidence["expected_fraction"] = expected;
      evidence["reward_rate"] = rate;
      std::snprintf(clause, sizeof clause,
                    "where a reward rate of %.2f would leave %.0f%% uniform if every prompt were equally hard (groups "
                    "of %.0f)",
                    rate, 100 * expected, group_size_);
    } else {
      std::snprintf(clause, sizeof clause, "above the %.0f%% that rldk treats as no signal when rewards are not a 0/1 rate",
                    100 * fallback_);
    }
    report(e.onset, e.end, e.peak_step, e.peak_value, std::move(evidence), {{"chance_clause", clause}});
  }
  double group_size_, margin_, min_fraction_, fallback_;
  Sustained sustained_;
  double expected_sum_ = 0, rate_sum_ = 0;
  int64_t counted_ = 0;
};

// ------------------------------------------------------------------------------------------------ schedule_jump
// Learning-rate schedules (warm-up, cosine, linear, constant) move smoothly. A jump is a relative change between
// consecutive values of at least jump_fraction (of the larger of the two) after smooth_window changes that were
// all below smooth_fraction: a warm-up from zero starts with large relative steps, so it never counts as smooth.
// A non-positive learning rate after a positive one is a jump too (a schedule that hit zero mid-run).
class ScheduleJump final : public Detector {
 public:
  explicit ScheduleJump(const DetectorSpec& s) : Detector(s) {
    jump_ = s.param("jump_fraction", 0.5);
    smooth_window_ = static_cast<int64_t>(s.param("smooth_window", 20));
    smooth_ = s.param("smooth_fraction", 0.1);
  }
  void reset() override {
    have_last_ = false;
    smooth_run_ = 0;
  }
  void observe(int64_t step, const double* x) override {
    double v = x[0];
    if (!std::isfinite(v)) return;
    if (have_last_) {
      double denom = std::max(std::fabs(v), std::fabs(last_));
      double rel = denom > 0 ? std::fabs(v - last_) / denom : 0.0;
      if (rel >= jump_ && smooth_run_ >= smooth_window_ && !printed_digit_step(last_, v)) {
        alarm(step);
        report(step, step, step, v,
               {{"previous", last_}, {"value", v}, {"relative_change", rel},
                {"smooth_steps_before", static_cast<double>(smooth_run_)}});
        smooth_run_ = 0;
      } else {
        smooth_run_ = rel < smooth_ ? smooth_run_ + 1 : 0;
      }
    }
    last_ = v;
    have_last_ = true;
  }
  void finish() override {}

 private:
  // A schedule printed with a fixed number of decimals (a loop's f"{lr:.8f}": 0.00000004, 0.00000003, ..., 0) keeps
  // one significant digit at a small learning rate, and its smooth decay shows as one-unit steps of that digit: 2 ->
  // 1 -> 0 units is a 50-100% change in one step. A change of exactly one unit of a power of ten that both values sit
  // on, at most 10 units, is that rounding. (A step decay from 2e-5 to 1e-5 looks the same and is no anomaly either.)
  static bool printed_digit_step(double a, double b) {
    double unit = std::fabs(a - b);
    if (!(unit > 0)) return false;
    double exponent = std::log10(unit);
    if (std::fabs(exponent - std::round(exponent)) > 1e-6) return false;
    auto on_grid = [unit](double x) {
      double units = std::fabs(x) / unit;
      return units <= 10 + 1e-6 && std::fabs(units - std::round(units)) < 1e-6;
    };
    return on_grid(a) && on_grid(b);
  }

  double jump_, smooth_;
  int64_t smooth_window_;
  double last_ = 0;
  bool have_last_ = false;
  int64_t smooth_run_ = 0;
};

}  // namespace

std::unique_ptr<Detector> make_threshold(const DetectorSpec& spec) { return std::make_unique<Threshold>(spec); }
std::unique_ptr<Detector> make_zero_variance_groups(const DetectorSpec& spec) { return std::make_unique<ZeroVarianceGroups>(spec); }
std::unique_ptr<Detector> make_schedule_jump(const DetectorSpec& spec) { return std::make_unique<ScheduleJump>(spec); }

}  // namespace rldk::detect
