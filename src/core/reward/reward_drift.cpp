// compare_reward_models(): see rldk/reward_drift.h. Samples of A and B are paired by (prompt, completion); a pair
// of equal keys on one side is matched in order of appearance.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <regex>
#include <unordered_map>

#include "model/embedded_data.h"
#include "reward/sample_table.h"
#include "rldk/reward_drift.h"
#include "stats/correlation.h"
#include "stats/distributions.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk {
namespace {

constexpr size_t QUOTE_CHARS = 200;

// Cuts text to at most `n` bytes without splitting a UTF-8 character.
std::string cut(std::string_view text, size_t n) {
  if (text.size() <= n) return std::string(text);
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n));
}

uint64_t key_of(std::string_view prompt, std::string_view completion) {
  uint64_t h = std::hash<std::string_view>{}(prompt);
  return h ^ (std::hash<std::string_view>{}(completion) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

// One side: per sample its key, prompt id, score and a short quote; prompts kept once each.
struct Side : SampleSink {
  std::string column, format;
  bool first_reward_only = true;
  std::vector<uint64_t> key;
  std::vector<uint32_t> prompt;
  std::vector<double> score;
  std::vector<std::string> completion;
  std::vector<std::string> prompts;
  std::unordered_map<uint64_t, uint32_t> prompt_index;
  size_t rows = 0;

  void on_schema(const SampleSchema& schema) override {
    if (column.empty() && !schema.rewards.empty()) column = schema.rewards.front();
    if (format.empty()) format = schema.format;
  }
  void on_row(const SampleRow& row) override {
    ++rows;
    double v = row.rewards[0];
    if (!std::isfinite(v)) return;
    uint64_t ph = std::hash<std::string_view>{}(row.prompt);
    auto [it, added] = prompt_index.emplace(ph, static_cast<uint32_t>(prompts.size()));
    if (added) prompts.emplace_back(row.prompt);
    key.push_back(key_of(row.prompt, row.completion));
    prompt.push_back(it->second);
    score.push_back(v);
    completion.push_back(cut(row.completion, QUOTE_CHARS));
  }
};

struct Thresholds {
  double agree_spearman, disagree_spearman, flip_rate, slope_low, slope_high;
};

// data/reward_drift.yaml: the verdict's thresholds, data rather than code.
const Thresholds& thresholds() {
  static const Thresholds t = [] {
    YAML::Node n = YAML::Load(std::string(embedded_file("reward_drift.yaml")));
    return Thresholds{n["agree_spearman"].as<double>(), n["disagree_spearman"].as<double>(),
                      n["sign_flip_rate"].as<double>(), n["slope_range"][0].as<double>(),
                      n["slope_range"][1].as<double>()};
  }();
  return t;
}

CorrelationEstimate estimate(const stats::Correlation& c) { return {c.r, c.n, c.ci_low, c.ci_high, c.p_value}; }

// Percentile interval of the mean of `d` over `resamples` bootstrap resamples (pairs resampled whole).
std::pair<double, double> bootstrap_mean(const std::vector<double>& d, size_t resamples, uint64_t seed,
                                         double confidence) {
  if (d.size() < 2 || resamples == 0) return {NO_VALUE, NO_VALUE};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, d.size() - 1);
  std::vector<double> means(resamples);
  for (auto& m : means) {
    double sum = 0;
    for (size_t i = 0; i < d.size(); ++i) sum += d[pick(rng)];
    m = sum / static_cast<double>(d.size());
  }
  std::sort(means.begin(), means.end());
  double alpha = (1 - confidence) / 2;
  return {stats::quantile_sorted(means, alpha), stats::quantile_sorted(means, 1 - alpha)};
}

std::vector<double> z_scores(const std::vector<double>& v) {
  double m = stats::mean(v), sd = std::sqrt(stats::variance(v, 0));
  std::vector<double> z(v.size(), 0.0);
  if (sd > 0) {
    for (size_t i = 0; i < v.size(); ++i) z[i] = (v[i] - m) / sd;
  }
  return z;
}

}  // namespace

Result<RewardDriftReport> compare_reward_models(const std::vector<std::string>& a_paths,
                                                const std::vector<std::string>& b_paths,
                                                const RewardDriftOptions& options, Diagnostics& diagnostics) {
  std::vector<std::pair<std::string, std::regex>> slices;
  for (const auto& [name, pattern] : options.slices) {
    try {
      slices.emplace_back(name, std::regex(pattern, std::regex::ECMAScript | std::regex::icase));
    } catch (const std::regex_error& e) {
      return Error{ErrorCode::invalid_argument, "slice " + name + ": bad regular expression: " + e.what(), pattern};
    }
  }
  Side a, b;
  a.column = options.read_a.columns.rewards.empty() ? "" : options.read_a.columns.rewards.front();
  b.column = options.read_b.columns.rewards.empty() ? "" : options.read_b.columns.rewards.front();
  for (auto [side, paths, read] : {std::tuple{&a, &a_paths, &options.read_a}, std::tuple{&b, &b_paths, &options.read_b}}) {
    for (const auto& path : *paths) {
      Status s = read_samples(path, *read, *side, diagnostics);
      if (!s.ok()) return s.error();
    }
  }
  RewardDriftReport r;
  r.column_a = a.column;
  r.column_b = b.column;
  r.format_a = a.format;
  r.format_b = b.format;
  r.rows_a = a.rows;
  r.rows_b = b.rows;

  // Pair by key, in order of appearance for repeated keys.
  std::unordered_map<uint64_t, std::vector<size_t>> in_a;
  for (size_t i = 0; i < a.key.size(); ++i) in_a[a.key[i]].push_back(i);
  std::unordered_map<uint64_t, size_t> used;
  std::vector<size_t> ia, ib;
  for (size_t j = 0; j < b.key.size(); ++j) {
    auto it = in_a.find(b.key[j]);
    size_t& k = used[b.key[j]];
    if (it == in_a.end() || k >= it->second.size()) continue;
    ia.push_back(it->second[k++]);
    ib.push_back(j);
  }
  r.paired = ia.size();
  r.unpaired_a = a.key.size() - r.paired;
  r.unpaired_b = b.key.size() - r.paired;
  if (r.paired < 3) {
    return Error{ErrorCode::unrecognized,
                 std::to_string(r.paired) + " sample(s) are in both A and B (matched by prompt and completion); a "
                 "comparison needs at least 3",
                 a_paths.empty() ? "" : a_paths.front()};
  }
  std::vector<double> sa(r.paired), sb(r.paired), d(r.paired);
  std::vector<uint32_t> group(r.paired);
  for (size_t k = 0; k < r.paired; ++k) {
    sa[k] = a.score[ia[k]];
    sb[k] = b.score[ib[k]];
    d[k] = sb[k] - sa[k];
    group[k] = a.prompt[ia[k]];
  }
  r.mean_a = stats::mean(sa);
  r.mean_b = stats::mean(sb);
  r.pearson = estimate(stats::pearson(sa, sb, options.confidence));
  r.spearman = estimate(stats::spearman(sa, sb, options.confidence));
  r.slope = stats::linear_fit(sa, sb).slope;
  r.intercept = stats::linear_fit(sa, sb).intercept;
  {
    std::vector<size_t> order(r.paired);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return sa[x] < sa[y]; });
    size_t bins = std::min<size_t>(20, r.paired);
    for (size_t b = 0; b < bins; ++b) {
      size_t lo = b * r.paired / bins, hi = (b + 1) * r.paired / bins;
      RewardDriftBin bin;
      bin.n = hi - lo;
      double ma = 0, mb = 0;
      for (size_t k = lo; k < hi; ++k) ma += sa[order[k]], mb += sb[order[k]];
      bin.a_mean = ma / static_cast<double>(bin.n);
      bin.b_mean = mb / static_cast<double>(bin.n);
      r.profile.push_back(bin);
    }
  }

  // Within prompt: centre both on each prompt's mean (prompts with one paired sample carry no within information).
  std::unordered_map<uint32_t, std::vector<size_t>> members;
  for (size_t k = 0; k < r.paired; ++k) members[group[k]].push_back(k);
  r.prompts = members.size();
  std::vector<double> ca, cb;
  size_t agreeing = 0, tied_a = 0, tied_b = 0;
  for (const auto& [g, idx] : members) {
    if (idx.size() < 2) continue;
    ++r.prompt_groups;
    double ma = 0, mb = 0;
    for (size_t k : idx) ma += sa[k], mb += sb[k];
    ma /= static_cast<double>(idx.size());
    mb /= static_cast<double>(idx.size());
    for (size_t k : idx) ca.push_back(sa[k] - ma), cb.push_back(sb[k] - mb);
    for (size_t x = 0; x < idx.size(); ++x) {
      for (size_t y = x + 1; y < idx.size(); ++y) {
        double da = sa[idx[x]] - sa[idx[y]], db = sb[idx[x]] - sb[idx[y]];
        ++r.pairs;
        tied_a += da == 0;
        tied_b += db == 0;
        if (da == 0 || db == 0) {
          ++r.pairs_tied;
        } else if ((da > 0) == (db > 0)) {
          ++agreeing;
        }
      }
    }
  }
  if (r.prompt_groups == 0) {
    r.within_reason = "no prompt has two or more paired samples, so scores cannot be compared within a prompt";
  } else {
    r.within_pearson = estimate(stats::pearson(ca, cb, options.confidence, r.prompt_groups));
    r.within_spearman = estimate(stats::spearman(ca, cb, options.confidence, r.prompt_groups));
    r.within_slope = stats::linear_fit(ca, cb).slope;
    size_t ordered = r.pairs - r.pairs_tied;
    r.ranking_agreement = ordered > 0 ? static_cast<double>(agreeing) / static_cast<double>(ordered) : NO_VALUE;
    r.sign_flip_rate = ordered > 0 ? 1 - r.ranking_agreement : NO_VALUE;
    double n0 = static_cast<double>(r.pairs), concordant = static_cast<double>(agreeing);
    double discordant = static_cast<double>(ordered - agreeing);
    double denominator = std::sqrt((n0 - static_cast<double>(tied_a)) * (n0 - static_cast<double>(tied_b)));
    r.within_kendall = denominator > 0 ? (concordant - discordant) / denominator : NO_VALUE;
  }

  // The paired difference.
  r.mean_difference = stats::mean(d);
  r.sd_difference = std::sqrt(stats::variance(d, 1));
  std::tie(r.ci_low, r.ci_high) = bootstrap_mean(d, options.bootstrap, options.seed, options.confidence);
  // A spread at rounding level (B = A + c computed in floating point) is no spread: d_z would be astronomic.
  if (r.sd_difference > 1e-12 * std::max(1.0, std::fabs(r.mean_difference))) {
    double n = static_cast<double>(r.paired);
    r.t_p_value = stats::student_t_two_sided_p(r.mean_difference / (r.sd_difference / std::sqrt(n)), n - 1);
    r.effect_size_dz = r.mean_difference / r.sd_difference;
  } else {
    r.t_p_value = r.mean_difference == 0 ? 1.0 : 0.0;  // every pair differs by the same amount
  }
  std::vector<double> za = z_scores(sa), zb = z_scores(sb);
  double abs_sum = 0, sq_sum = 0, signs = 0;
  for (size_t k = 0; k < r.paired; ++k) {
    double e = za[k] - zb[k];
    abs_sum += std::fabs(e);
    sq_sum += e * e;
    signs += (sa[k] > 0) != (sb[k] > 0) || (sa[k] == 0) != (sb[k] == 0);
  }
  auto n = static_cast<double>(r.paired);
  r.drift_magnitude = std::fabs(r.mean_b - r.mean_a);
  r.mae_z = abs_sum / n;
  r.l2_z = std::sqrt(sq_sum / n);
  r.sign_disagreement = signs / n;

  for (size_t s = 0; s < slices.size(); ++s) {
    RewardDriftSlice slice{slices[s].first, options.slices[s].second};
    std::vector<double> ds;
    for (size_t k = 0; k < r.paired; ++k) {
      if (std::regex_search(a.prompts[group[k]], slices[s].second)) ds.push_back(d[k]);
    }
    slice.n = ds.size();
    if (!ds.empty()) slice.mean_difference = stats::mean(ds);
    std::tie(slice.ci_low, slice.ci_high) = bootstrap_mean(ds, options.bootstrap, options.seed + s + 1,
                                                           options.confidence);
    r.slices.push_back(std::move(slice));
  }

  std::vector<size_t> order(r.paired);
  for (size_t k = 0; k < r.paired; ++k) order[k] = k;
  size_t shown = std::min(options.examples, r.paired);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                    [&](size_t x, size_t y) { return std::fabs(za[x] - zb[x]) > std::fabs(za[y] - zb[y]); });
  for (size_t k = 0; k < shown; ++k) {
    size_t i = order[k];
    if (std::fabs(za[i] - zb[i]) < 1e-9) break;  // the rest agree exactly once standardised
    r.examples.push_back({cut(a.prompts[group[i]], QUOTE_CHARS), a.completion[ia[i]], sa[i], sb[i], za[i], zb[i]});
  }

  // The verdict, on the within-prompt ranking when there is one (what a policy optimiser feels), else raw.
  const Thresholds& t = thresholds();
  double rho = std::isnan(r.within_spearman.r) ? r.spearman.r : r.within_spearman.r;
  double slope = std::isnan(r.within_slope) ? r.slope : r.within_slope;
  bool shifted = !std::isnan(r.ci_low) && (r.ci_low > 0 || r.ci_high < 0);
  if (std::isnan(rho) || rho < t.disagree_spearman ||
      (!std::isnan(r.sign_flip_rate) && r.sign_flip_rate > t.flip_rate)) {
    r.verdict = "disagree";
    r.summary = "The two reward models rank samples differently: Spearman " + reward::format_number(rho) +
                (std::isnan(r.sign_flip_rate) ? "" : ", " + reward::format_number(100 * r.sign_flip_rate) +
                                                         "% of same-prompt pairs flip") + ".";
  } else if (rho < t.agree_spearman || shifted || !(slope >= t.slope_low && slope <= t.slope_high)) {
    r.verdict = "drifted";
    r.summary = "The two reward models mostly agree on the order (Spearman " + reward::format_number(rho) +
                ") but moved: mean difference " + reward::format_number(r.mean_difference) + " [" +
                reward::format_number(r.ci_low) + ", " + reward::format_number(r.ci_high) + "], slope " +
                reward::format_number(slope) + ".";
  } else {
    r.verdict = "agree";
    r.summary = "The two reward models agree on the order (Spearman " + reward::format_number(rho) +
                "), the level and the scale (slope " + reward::format_number(slope) + ").";
  }
  return r;
}

}  // namespace rldk
