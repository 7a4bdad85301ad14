// calibration (methods.md §3.1): is sigma(score_first - score_second) a probability the preferred completion wins?
// Accuracy with a Wilson interval and an exact binomial test, log-loss, Brier, ECE over confidence max(p, 1 - p)
// (pairs are symmetric: which completion is "first" is arbitrary, so binning p itself would mix both sides) with a
// percentile bootstrap interval (ECE is biased upward on few pairs), and the fitted temperature.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "reward/sample_table.h"
#include "stats/distributions.h"

namespace rldk::reward {
namespace {

// log(1 + exp(x)) without overflow.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

// z is a pair's margin signed toward the preferred completion (z > 0: the model agrees). Right: 1, a tie: 1/2.
double correct_of(double z) { return z > 0 ? 1.0 : z == 0 ? 0.5 : 0.0; }

// ECE over `bins` equal-width bins of confidence sigma(|z| / T) in [0.5, 1]; the sample is z[idx[k]].
double ece_of(const std::vector<double>& z, const std::vector<size_t>& idx, size_t bins, double temperature,
              std::vector<CalibrationBin>* out) {
  std::vector<double> count(bins, 0), conf(bins, 0), acc(bins, 0);
  for (size_t i : idx) {
    double c = sigmoid(std::abs(z[i]) / temperature);
    auto b = static_cast<size_t>((c - 0.5) * 2 * static_cast<double>(bins));
    b = std::min(b, bins - 1);
    count[b] += 1;
    conf[b] += c;
    acc[b] += correct_of(z[i]);
  }
  double ece = 0, n = static_cast<double>(idx.size());
  for (size_t b = 0; b < bins; ++b) {
    if (count[b] > 0) ece += std::abs(acc[b] - conf[b]) / n;
    if (out) {
      double width = 0.5 / static_cast<double>(bins);
      CalibrationBin bin{0.5 + width * static_cast<double>(b), 0.5 + width * static_cast<double>(b + 1),
                         static_cast<size_t>(count[b]), NO_VALUE, NO_VALUE};
      if (count[b] > 0) {
        bin.confidence = conf[b] / count[b];
        bin.accuracy = acc[b] / count[b];
      }
      out->push_back(bin);
    }
  }
  return ece;
}

// The same over equal-mass bins (Nixon et al. 2019): each bin holds n / bins pairs in confidence order.
double adaptive_ece_of(const std::vector<double>& z, size_t bins) {
  std::vector<double> sorted_abs(z.size());
  std::vector<size_t> order(z.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return std::abs(z[a]) < std::abs(z[b]); });
  double ece = 0, n = static_cast<double>(z.size());
  for (size_t b = 0; b < bins; ++b) {
    size_t lo = b * z.size() / bins, hi = (b + 1) * z.size() / bins;
    double conf = 0, acc = 0;
    for (size_t k = lo; k < hi; ++k) {
      conf += sigmoid(std::abs(z[order[k]]));
      acc += correct_of(z[order[k]]);
    }
    ece += std::abs(acc - conf) / n;
  }
  return ece;
}

double log_loss_of(const std::vector<double>& z, double temperature) {
  double sum = 0;
  for (double v : z) sum += softplus(-v / temperature);
  return sum / static_cast<double>(z.size());
}

// The inverse temperature b minimising sum softplus(-b z): convex in b, so its derivative's root, bracketed and
// bisected (Newton alone overshoots on near-separable data). Returns 0 when the model ranks no better than chance
// (the loss only grows with b) and +inf when every pair is right (the loss falls forever).
double fitted_inverse_temperature(const std::vector<double>& z) {
  auto slope = [&](double b) {
    double d = 0;
    for (double v : z) d -= v * sigmoid(-b * v);
    return d;
  };
  if (slope(0) >= 0) return 0;
  double hi = 1;
  while (slope(hi) < 0) {
    hi *= 2;
    if (hi > 1e12) return INFINITY;
  }
  double lo = 0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    double mid = 0.5 * (lo + hi);
    (slope(mid) < 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Two-sided exact binomial test of k successes in n against 1/2.
double binomial_test_half(size_t k, size_t n) {
  if (n == 0) return NO_VALUE;
  size_t low = std::min(k, n - k);
  // P(X <= low) = I_{1/2}(n - low, low + 1); the distribution is symmetric, so the two tails are equal.
  double tail = low == n ? 1.0 : stats::incomplete_beta(static_cast<double>(n - low), static_cast<double>(low + 1), 0.5);
  return std::min(1.0, 2 * tail);
}

__extension__ typedef unsigned __int128 Wide;  // for Lemire's bounded draw; GCC and Clang both have it

std::string pct(double v) { return format_number(100 * v, 3) + "%"; }

}  // namespace

CalibrationCheck check_calibration(const RewardHealthAccumulator::State& s, const RewardHealthThresholds& t) {
  CalibrationCheck c;
  if (s.pair_margin.empty()) {
    c.reason = "no preference pairs were given (a file with chosen/rejected or response_a/response_b columns)";
    return c;
  }
  std::vector<double> z;
  size_t wins = 0;
  for (size_t i = 0; i < s.pair_margin.size(); ++i) {
    double m = s.pair_margin[i];
    float y = s.pair_label[i];
    if (!std::isfinite(m)) {
      ++c.unscored;
      continue;
    }
    if (y == 0.5f) {
      ++c.label_ties;
      continue;
    }
    double signed_margin = y == 1.0f ? m : -m;
    z.push_back(signed_margin);
    c.score_ties += signed_margin == 0;
    wins += signed_margin > 0;
  }
  c.pairs = z.size();
  if (c.pairs < t.calibration_min_pairs) {
    c.reason = std::to_string(c.pairs) + " scored pair(s) with a preference label; calibration needs " +
               std::to_string(t.calibration_min_pairs) +
               (c.unscored > 0 ? " (" + std::to_string(c.unscored) + " pair(s) lack a score for each completion)" : "");
    return c;
  }
  double n = static_cast<double>(c.pairs);
  double right = static_cast<double>(wins) + 0.5 * static_cast<double>(c.score_ties);
  c.accuracy = right / n;
  double zq = stats::normal_quantile(0.5 + t.confidence / 2);
  double centre = (c.accuracy + zq * zq / (2 * n)) / (1 + zq * zq / n);
  double half = zq / (1 + zq * zq / n) * std::sqrt(c.accuracy * (1 - c.accuracy) / n + zq * zq / (4 * n * n));
  c.accuracy_ci_low = centre - half;
  c.accuracy_ci_high = centre + half;
  c.accuracy_p_value = binomial_test_half(wins, c.pairs - c.score_ties);

  double brier = 0, extreme = 0;
  for (double v : z) {
    double p_preferred = sigmoid(v);
    brier += (1 - p_preferred) * (1 - p_preferred);
    extreme += sigmoid(std::abs(v)) > 0.99;
  }
  c.brier = brier / n;
  c.extreme_share = extreme / n;
  c.log_loss = log_loss_of(z, 1);
  std::vector<size_t> all(z.size());
  std::iota(all.begin(), all.end(), size_t{0});
  c.ece = ece_of(z, all, t.calibration_bins, 1, &c.bins);
  c.adaptive_ece = adaptive_ece_of(z, t.calibration_bins);

  // Percentile bootstrap of ECE over pairs. Draws by 128-bit multiply (Lemire), not uniform_int_distribution,
  // whose algorithm differs between standard libraries: the interval must not depend on the build.
  std::mt19937_64 rng(0x5eedca1bULL);
  std::vector<double> eces;
  std::vector<size_t> idx(z.size());
  for (size_t r = 0; r < t.calibration_resamples; ++r) {
    for (auto& i : idx) i = static_cast<size_t>((static_cast<Wide>(rng()) * z.size()) >> 64);
    eces.push_back(ece_of(z, idx, t.calibration_bins, 1, nullptr));
  }
  std::sort(eces.begin(), eces.end());
  auto at = [&](double q) { return eces[std::min(eces.size() - 1, static_cast<size_t>(q * static_cast<double>(eces.size())))]; };
  c.ece_ci_low = at((1 - t.confidence) / 2);
  c.ece_ci_high = at((1 + t.confidence) / 2);

  double beta = fitted_inverse_temperature(z);
  if (beta == 0) {
    c.temperature_reason = "the scores rank the pairs no better than chance, so no temperature makes them a probability";
  } else if (std::isinf(beta)) {
    c.temperature_reason = "every pair is ranked right: any temperature towards 0 lowers the log-loss";
  } else {
    c.temperature = 1 / beta;
    c.log_loss_at_temperature = log_loss_of(z, c.temperature);
    c.ece_at_temperature = ece_of(z, all, t.calibration_bins, c.temperature, nullptr);
  }

  // The most confidently wrong pairs, most confident first.
  std::vector<MiscalibratedPair> wrong = s.wrong;
  std::sort(wrong.begin(), wrong.end(), [](const auto& a, const auto& b) { return a.confidence > b.confidence; });
  if (wrong.size() > t.calibration_quotes) wrong.resize(t.calibration_quotes);
  c.confidently_wrong = std::move(wrong);

  std::string accuracy = "accuracy " + format_number(c.accuracy) + " [" + format_number(c.accuracy_ci_low) + ", " +
                         format_number(c.accuracy_ci_high) + "] over " + std::to_string(c.pairs) + " pairs";
  std::string ece = "ECE " + format_number(c.ece) + " [" + format_number(c.ece_ci_low) + ", " +
                    format_number(c.ece_ci_high) + "]";
  std::string scale;
  if (!std::isnan(c.temperature)) {
    scale = c.temperature > 1 ? "overconfident: its score margins are " + format_number(c.temperature) +
                                    "x too large (fitted temperature " + format_number(c.temperature) + ")"
                              : "underconfident: its score margins are " + format_number(1 / c.temperature) +
                                    "x too small (fitted temperature " + format_number(c.temperature) + ")";
  }
  bool below_chance = c.accuracy < 0.5 && c.accuracy_p_value < t.calibration_accuracy_p_value;
  bool chance = !below_chance && !(c.accuracy_p_value < t.calibration_accuracy_p_value);
  if (below_chance) {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::critical;
    c.message = "The reward model prefers the rejected completion: " + accuracy + " (binomial p = " +
                format_number(c.accuracy_p_value, 2) + ").";
  } else if (chance) {
    c.status = RewardCheckStatus::finding;
    c.severity = Severity::warning;
    c.message = "The scores rank the pairs no better than chance: " + accuracy + " (binomial p = " +
                format_number(c.accuracy_p_value, 2) + ").";
  } else if (c.ece_ci_low > t.calibration_ece_warning) {
    c.status = RewardCheckStatus::finding;
    c.severity = c.ece > t.calibration_ece_critical ? Severity::critical : Severity::warning;
    c.message = "Miscalibrated: " + ece + " on sigma(score difference)" + (scale.empty() ? "" : "; " + scale) +
                "; " + accuracy + ". Its margins are not preference probabilities: scale them before using them "
                "as such (e.g. for a KL-regularised objective or a best-of-n threshold).";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "Calibrated within " + pct(t.calibration_ece_warning) + ": " + ece + ", " + accuracy + ".";
  }
  return c;
}

}  // namespace rldk::reward
