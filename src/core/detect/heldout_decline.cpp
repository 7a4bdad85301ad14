// The heldout_decline kind: a held-out metric logged at eval steps falls from its best while the proxy rises.
#include <algorithm>
#include <cmath>
#include <map>

#include "detect/kind_support.h"
#include "stats/robust.h"

namespace rldk::detect {
namespace {

// ------------------------------------------------------------------------------------------------ heldout_decline
// Over-optimisation of a proxy: a held-out metric where higher is better (second input: eval reward, gold reward,
// eval accuracy), logged only at eval steps, falls below its best while the proxy (first input, logged every step)
// keeps rising. The driver carries the held-out value forward between evals, so a new eval is a value that differs
// from the previous one. The held-out level is the median of the last three evals; the proxy's level at an eval is
// its mean over the same stretch (the proxy points of the last three eval intervals), so both levels describe the
// same steps. At each eval, once min_evals are in, the drop of the held-out level from its best earlier value is
// compared with the eval-to-eval noise (robust spread of second differences of the first 64 evals, / sqrt 6), and
// the proxy's rise since that best with the proxy's early noise (difference_noise of its first
// proxy_reference_points values). An episode is min_points consecutive evals where both hold; its onset is the
// first of them (the decline began between the best eval and it).
//
// The proxy level used to be an exponentially weighted average; its lag made a proxy that had already levelled off
// keep "rising" for many evals after the best one, and an eval reward wandering on its plateau read as hacking on
// clean synthetic runs logged every 10 steps.
class HeldoutDecline final : public Detector {
 public:
  explicit HeldoutDecline(const DetectorSpec& s) : Detector(s) {
    proxy_ref_points_ = static_cast<size_t>(std::max(3.0, s.param("proxy_reference_points", 50)));
    min_evals_ = static_cast<size_t>(std::max(3.0, s.param("min_evals", 4)));
    drop_sigma_ = s.param("heldout_min_drop_sigma", 3);
    rise_sigma_ = s.param("proxy_min_rise_sigma", 2);
    sustained_.configure(static_cast<int64_t>(s.param("min_points", 2)), 0);
    proxy_ref_.reserve(proxy_ref_points_);
  }
  void reset() override {
    finish();
    proxy_ref_.clear();
    evals_.clear();
    eval_count_ = 0;
    eval_sigma_ = 0;
    proxy_sigma_ = 0;
    have_proxy_ = false;
    interval_sum_ = 0;
    interval_count_ = 0;
    for (auto& i : intervals_) i = {0, 0};
    best_ = NaN;
  }
  void observe(int64_t step, const double* x) override {
    double proxy = x[0], heldout = x[1];
    if (std::isfinite(proxy)) {
      interval_sum_ += proxy;
      ++interval_count_;
      have_proxy_ = true;
      if (proxy_sigma_ <= 0 && proxy_ref_.size() < proxy_ref_points_) {
        proxy_ref_.push_back(proxy);
        if (proxy_ref_.size() == proxy_ref_points_) proxy_sigma_ = difference_noise(proxy_ref_);
      }
    }
    if (!std::isfinite(heldout) || !have_proxy_) return;
    if (eval_count_ > 0 && heldout == last_eval_) return;  // carried forward: no new eval
    last_eval_ = heldout;
    ++eval_count_;
    intervals_[eval_count_ % 3] = {interval_sum_, interval_count_};
    interval_sum_ = 0;
    interval_count_ = 0;
    double proxy_level = proxy_level_of_recent_intervals();
    if (evals_.size() < NOISE_EVALS) {
      evals_.push_back(heldout);
      // Second differences: evals are far apart, so the metric's own improvement between evals is large next to
      // its noise, and a second difference cancels a locally linear trend.
      eval_sigma_ = stats::second_difference_noise(evals_, scratch_);
    }
    // The held-out level is the median of the last three evals: one lucky eval must not become a "best" that
    // every later eval seems to fall from.
    recent_[eval_count_ % 3] = heldout;
    recent_steps_[eval_count_ % 3] = step;
    double level = eval_count_ >= 3 ? stats::median_of_three(recent_[0], recent_[1], recent_[2]) : heldout;
    bool anomalous = false;
    if (eval_count_ >= min_evals_ && proxy_sigma_ > 0 && eval_sigma_ > 0 && std::isfinite(best_)) {
      double drop = best_ - level, rise = proxy_level - proxy_at_best_;
      anomalous = drop >= drop_sigma_ * eval_sigma_ && rise >= rise_sigma_ * proxy_sigma_;
      if (anomalous && !sustained_.episode().open) {
        evidence_ = {{"best_heldout", best_},
                     {"best_step", static_cast<double>(best_step_)},
                     {"heldout_value", level},
                     {"drop_sigma", drop / eval_sigma_},
                     {"proxy_rise_sigma", rise / proxy_sigma_},
                     {"eval_noise", eval_sigma_}};
      }
    }
    if (sustained_.feed(step, anomalous, level, best_ - level)) emit();
    if (sustained_.confirmed()) alarm(step);
    // The best is a median of three too: a single lucky eval at the start must not be the level later evals fall
    // from (a run with 5 evals read its second eval as the best).
    if (eval_count_ >= 3 && (!std::isfinite(best_) || level > best_)) {
      best_ = level;
      // Dated at the eval whose value is that median (the best level is not the latest of the three).
      best_step_ = step;
      for (int i = 0; i < 3; ++i) {
        if (recent_[i] == level) best_step_ = recent_steps_[i];
      }
      proxy_at_best_ = proxy_level;
    }
  }
  void finish() override {
    if (sustained_.close()) emit();
  }

 private:
  void emit() {
    const Episode& e = sustained_.episode();
    std::map<std::string, double> evidence = evidence_;
    evidence["evals"] = static_cast<double>(e.points);
    evidence["lowest_heldout"] = e.peak_value;
    report(e.onset, e.end, e.peak_step, e.peak_value, std::move(evidence));
  }
  // The proxy's mean over the last three eval intervals (those with proxy points; an interval can be empty when
  // two evals share a step).
  double proxy_level_of_recent_intervals() const {
    double sum = 0, count = 0;
    for (const auto& i : intervals_) {
      sum += i.first;
      count += i.second;
    }
    return count > 0 ? sum / count : NaN;
  }
  // The eval-to-eval noise is estimated from the first NOISE_EVALS evals (memory stays fixed on long runs).
  static constexpr size_t NOISE_EVALS = 64;
  size_t proxy_ref_points_, min_evals_, eval_count_ = 0;
  double drop_sigma_, rise_sigma_, last_eval_ = 0, eval_sigma_ = 0;
  Sustained sustained_;
  std::vector<double> proxy_ref_, evals_, scratch_;
  double proxy_sigma_ = 0, interval_sum_ = 0, interval_count_ = 0;
  std::pair<double, double> intervals_[3] = {{0, 0}, {0, 0}, {0, 0}};  // proxy sum and count per eval interval
  bool have_proxy_ = false;
  double recent_[3] = {0, 0, 0};
  int64_t recent_steps_[3] = {0, 0, 0};
  double best_ = NaN, proxy_at_best_ = 0;
  int64_t best_step_ = 0;
  std::map<std::string, double> evidence_;
};

}  // namespace

std::unique_ptr<Detector> make_heldout_decline(const DetectorSpec& spec) { return std::make_unique<HeldoutDecline>(spec); }

}  // namespace rldk::detect
