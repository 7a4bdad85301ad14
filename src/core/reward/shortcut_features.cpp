// shortcut_features (methods.md §3.4, generalising §3.3): does the reward pay for cheap surface features of the text
// (markup, hedging, apologies, refusals, affirmations, ...) rather than for content? Everything is within group
// (the same prompt at the same step), so prompt difficulty and training progress cannot fake an effect: reward and
// every feature are centred on their (step, group) mean, which is the prompt fixed-effects regression of §3.4.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "reward/sample_table.h"
#include "stats/distributions.h"

namespace rldk::reward {
namespace {

// Solves A x = b for a symmetric positive semi-definite k x k A (row-major) by Cholesky, leaving out every variable
// whose pivot is below `tolerance` x its diagonal: that variable is (numerically) a linear combination of the ones
// before it and adds nothing to the fit. `used[j]` says whether x[j] is part of the solution (else x[j] = 0).
std::vector<double> cholesky_solve(std::vector<double> a, std::vector<double> b, size_t k, std::vector<bool>& used,
                                   double tolerance = 1e-9) {
  used.assign(k, false);
  std::vector<double> l(k * k, 0.0);
  for (size_t j = 0; j < k; ++j) {
    double diagonal = a[j * k + j];
    if (!(diagonal > 0)) continue;
    double d = diagonal;
    for (size_t m = 0; m < j; ++m) {
      if (used[m]) d -= l[j * k + m] * l[j * k + m];
    }
    if (!(d > tolerance * diagonal)) continue;
    used[j] = true;
    l[j * k + j] = std::sqrt(d);
    for (size_t i = j + 1; i < k; ++i) {
      double v = a[i * k + j];
      for (size_t m = 0; m < j; ++m) {
        if (used[m]) v -= l[i * k + m] * l[j * k + m];
      }
      l[i * k + j] = v / l[j * k + j];
    }
  }
  // Forward then back substitution over the used variables (the left-out rows and columns are skipped).
  std::vector<double> y(k, 0.0), x(k, 0.0);
  for (size_t i = 0; i < k; ++i) {
    if (!used[i]) continue;
    double v = b[i];
    for (size_t m = 0; m < i; ++m) {
      if (used[m]) v -= l[i * k + m] * y[m];
    }
    y[i] = v / l[i * k + i];
  }
  for (size_t i = k; i-- > 0;) {
    if (!used[i]) continue;
    double v = y[i];
    for (size_t m = i + 1; m < k; ++m) {
      if (used[m]) v -= l[m * k + i] * x[m];
    }
    x[i] = v / l[i * k + i];
  }
  return x;
}

std::string percent(double share) { return format_number(100 * share, 3) + "%"; }

}  // namespace

ShortcutFeaturesCheck check_shortcut_features(const ColumnData& column, const RewardHealthAccumulator::State& state,
                                              size_t column_index, const RewardHealthThresholds& t) {
  ShortcutFeaturesCheck c;
  const size_t k = state.feature_names.size();
  for (size_t j = 0; j < k; ++j) {
    ShortcutFeature f;
    f.name = state.feature_names[j];
    f.kind = j < BUILTIN_FEATURES.size() ? "builtin" : "phrase";
    f.judged = j != LOG_LENGTH_FEATURE;
    c.features.push_back(std::move(f));
  }
  if (column.value.size() < t.shortcut_min_samples) {
    c.reason = "only " + std::to_string(column.value.size()) + " samples with this reward; the shortcut probes need " +
               std::to_string(t.shortcut_min_samples);
    return c;
  }
  const auto& groups = column.groups;
  c.groups = groups.size();
  for (const auto& g : groups) c.samples += g.size();
  if (groups.empty()) {
    c.reason = "no (step, group) has two or more samples, so there is no within-group variation to regress";
    return c;
  }
  // One intercept per group plus the slope: n - groups - 1 residual degrees of freedom.
  if (c.samples < c.groups + 3) {
    c.reason = "too few samples beyond one per group (" + std::to_string(c.samples) + " samples in " +
               std::to_string(c.groups) + " groups) for a within-group regression";
    return c;
  }
  c.df = c.samples - c.groups - 1;

  // Centred cross products, accumulated group by group: syy, sxy[j], sxx[j * k + m]. Nothing of size n is kept.
  double syy = 0;
  std::vector<double> sxy(k, 0.0), sxx(k * k, 0.0), sum(k, 0.0), mean_x(k), dx(k);
  std::vector<size_t> present(k, 0);
  for (const auto& g : groups) {
    auto size = static_cast<double>(g.size());
    double mean_y = 0;
    std::fill(mean_x.begin(), mean_x.end(), 0.0);
    for (size_t pos : g) {
      mean_y += column.value[pos];
      const float* x = state.features.data() + column.sample[pos] * k;
      for (size_t j = 0; j < k; ++j) {
        mean_x[j] += x[j];
        sum[j] += x[j];
        present[j] += x[j] != 0 ? 1 : 0;
      }
    }
    mean_y /= size;
    for (double& m : mean_x) m /= size;
    for (size_t pos : g) {
      double dy = column.value[pos] - mean_y;
      const float* x = state.features.data() + column.sample[pos] * k;
      for (size_t j = 0; j < k; ++j) dx[j] = x[j] - mean_x[j];
      syy += dy * dy;
      for (size_t j = 0; j < k; ++j) {
        sxy[j] += dx[j] * dy;
        for (size_t m = 0; m <= j; ++m) sxx[j * k + m] += dx[j] * dx[m];
      }
    }
  }
  for (size_t j = 0; j < k; ++j) {
    for (size_t m = 0; m < j; ++m) sxx[m * k + j] = sxx[j * k + m];
  }
  auto n = static_cast<double>(c.samples);
  for (size_t j = 0; j < k; ++j) {
    c.features[j].mean = sum[j] / n;
    c.features[j].present_share = static_cast<double>(present[j]) / n;
  }
  if (!(syy > 0)) {
    c.reason = "rewards within groups do not vary, so no feature can explain them";
    return c;
  }

  // One feature at a time: r = Sxy / sqrt(Sxx Syy), the standardized slope, and r^2 its share of the within-group
  // reward variance. Features that do not vary within any group have nothing to say.
  auto df = static_cast<double>(c.df);
  bool any_judged = false;
  for (size_t j = 0; j < k; ++j) {
    ShortcutFeature& f = c.features[j];
    double vx = sxx[j * k + j];
    // Relative cut: float storage leaves rounding noise around 1e-7 of the feature's scale in a constant feature.
    if (!(vx > 1e-10 * std::max(1.0, sum[j] * sum[j] / n))) {
      f.reason = f.present_share > 0 ? "does not vary within any group" : "absent from every sample";
      continue;
    }
    f.r = std::clamp(sxy[j] / std::sqrt(vx * syy), -1.0, 1.0);
    f.r2 = f.r * f.r;
    f.p_value = f.r2 >= 1 ? 0.0 : stats::student_t_two_sided_p(f.r * std::sqrt(df / (1 - f.r2)), df);
    any_judged = any_judged || f.judged;
  }
  if (!any_judged) {
    c.reason = "no surface feature other than length varies within a group (length: see length_bias)";
    return c;
  }
  // Partial correlations given length: r_yj.L = (r_yj - r_yL r_jL) / sqrt((1 - r_yL^2)(1 - r_jL^2)), one more
  // degree of freedom spent. Without a varying length feature they equal the plain ones.
  size_t length_index = k;
  for (size_t j = 0; j < k; ++j) {
    if (!c.features[j].judged && !std::isnan(c.features[j].r)) length_index = j;
  }
  for (size_t j = 0; j < k; ++j) {
    ShortcutFeature& f = c.features[j];
    if (!f.judged || std::isnan(f.r)) continue;
    if (length_index == k) {
      f.partial_r = f.r;
      f.partial_r2 = f.r2;
      f.partial_p_value = f.p_value;
      continue;
    }
    double r_yl = c.features[length_index].r;
    double r_jl = sxx[j * k + length_index] / std::sqrt(sxx[j * k + j] * sxx[length_index * k + length_index]);
    double denominator = std::sqrt((1 - r_yl * r_yl) * (1 - r_jl * r_jl));
    if (!(denominator > 1e-12)) {
      f.reason = "moves in lockstep with length within groups, so it cannot be told apart from it";
      continue;
    }
    f.partial_r = std::clamp((f.r - r_yl * r_jl) / denominator, -1.0, 1.0);
    f.partial_r2 = f.partial_r * f.partial_r;
    double pdf = df - 1;
    f.partial_p_value = f.partial_r2 >= 1 ? 0.0
                                          : stats::student_t_two_sided_p(f.partial_r * std::sqrt(pdf / (1 - f.partial_r2)), pdf);
  }

  // Joint fit on the standardized features: the normal equations become the within-group correlation matrix R and
  // the vector r of single-feature correlations; R gamma = r gives the standardized coefficients and
  // R^2 = gamma . r. Features that do not vary are left out (zero row), collinear ones by the pivot test.
  std::vector<double> corr(k * k, 0.0), rhs(k, 0.0);
  for (size_t j = 0; j < k; ++j) {
    if (std::isnan(c.features[j].r)) continue;
    rhs[j] = c.features[j].r;
    for (size_t m = 0; m < k; ++m) {
      if (std::isnan(c.features[m].r)) continue;
      corr[j * k + m] = sxx[j * k + m] / std::sqrt(sxx[j * k + j] * sxx[m * k + m]);
    }
  }
  std::vector<bool> used;
  std::vector<double> gamma = cholesky_solve(corr, rhs, k, used);
  double r2 = 0;
  for (size_t j = 0; j < k; ++j) {
    if (!used[j]) {
      if (!std::isnan(c.features[j].r)) {
        c.features[j].reason = "collinear with the features before it; left out of the joint fit";
      }
      continue;
    }
    ++c.joint_features;
    c.features[j].joint_coefficient = gamma[j];
    r2 += gamma[j] * rhs[j];
  }
  c.joint_r2 = std::clamp(r2, 0.0, 1.0);

  // Verdict and evidence.
  // Samples by reward, highest first, ordered only when a feature is flagged (a full sort of a million indices
  // is most of this check's time otherwise).
  std::vector<size_t> by_reward;
  auto order_by_reward = [&] {
    if (!by_reward.empty()) return;
    by_reward.resize(column.value.size());
    std::iota(by_reward.begin(), by_reward.end(), size_t{0});
    std::sort(by_reward.begin(), by_reward.end(), [&](size_t a, size_t b) {
      if (column.value[a] != column.value[b]) return column.value[a] > column.value[b];
      return state.words[column.sample[a]] > state.words[column.sample[b]];  // as the kept texts are ordered
    });
  };
  std::string flagged_text;
  bool critical = false;
  for (size_t j = 0; j < k; ++j) {
    ShortcutFeature& f = c.features[j];
    if (!f.judged || std::isnan(f.partial_r2) || !(f.partial_r2 > t.shortcut_r2_warning) ||
        !(f.partial_p_value < t.shortcut_p_value)) {
      continue;
    }
    f.flagged = true;
    critical = critical || f.partial_r2 > t.shortcut_r2_critical;
    order_by_reward();
    for (size_t pos : by_reward) {
      if (f.examples.size() >= t.shortcut_quotes) break;
      size_t i = column.sample[pos];
      float value = state.features[i * k + j];
      if (value == 0) continue;
      ShortcutExample e;
      e.source = state.sources[state.source[i]];
      e.row = state.row[i];
      e.step = state.step[i];
      e.reward = column.value[pos];
      e.value = value;
      if (const KeptExample* kept = kept_example(state, column_index, i)) {
        e.text_kept = true;
        e.text = kept->text;
        e.text_truncated = kept->truncated;
      }
      f.examples.push_back(std::move(e));
    }
    flagged_text += (flagged_text.empty() ? "" : "; ") + f.name + " (" + (f.partial_r > 0 ? "paid for" : "penalised") +
                    ": r = " + format_number(f.partial_r) + ", r^2 = " + percent(f.partial_r2) +
                    " with length held fixed, p = " + format_number(f.partial_p_value, 2) + ")";
  }
  const ShortcutFeature& length = c.features[LOG_LENGTH_FEATURE];
  std::string context = "all features together explain " + percent(c.joint_r2) +
                        " of the within-group reward variance (length alone " +
                        (std::isnan(length.r2) ? std::string("n/a") : percent(length.r2)) + ", judged by length_bias)";
  if (!flagged_text.empty()) {
    c.status = RewardCheckStatus::finding;
    c.severity = critical ? Severity::critical : Severity::warning;
    c.message = "The reward follows surface features of the text: " + flagged_text + "; " + context + ".";
  } else {
    c.status = RewardCheckStatus::ok;
    c.message = "No surface feature other than length explains more than " + percent(t.shortcut_r2_warning) +
                " of the within-group reward variance at p < " + format_number(t.shortcut_p_value) + "; " + context +
                ".";
  }
  return c;
}

}  // namespace rldk::reward
