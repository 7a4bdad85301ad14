// evaluate(): from eval results to the eval card's numbers. Per task it picks the design the data allows (paired
// items, seeds, both, or items without pairing), runs that design's tests on direction-adjusted scores (positive =
// B better), corrects the p-values across tasks (Holm), says what power the data has, and decides the gate.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "evals/format.h"
#include "rldk/evals.h"
#include "stats/robust.h"

namespace rldk::evals {
namespace {

// Scores of one arm on one task: seed -> item -> (sum, count). Item "" when rows carry no item id.
using SeedItems = std::map<std::string, std::map<std::string, std::pair<double, size_t>>>;

double cell_mean(const std::pair<double, size_t>& c) { return c.first / static_cast<double>(c.second); }

// One score per seed: the mean over its items.
std::vector<double> seed_scores(const SeedItems& s) {
  std::vector<double> out;
  for (const auto& [seed, items] : s) {
    double sum = 0;
    for (const auto& [item, c] : items) sum += cell_mean(c);
    out.push_back(sum / static_cast<double>(items.size()));
  }
  return out;
}

bool has_items(const SeedItems& s) {
  for (const auto& [seed, items] : s) {
    for (const auto& [item, c] : items) {
      if (!item.empty()) return true;
    }
  }
  return false;
}

// Item -> mean over seeds of the item's score.
std::map<std::string, double> item_means(const SeedItems& s) {
  std::map<std::string, std::pair<double, size_t>> acc;
  for (const auto& [seed, items] : s) {
    for (const auto& [item, c] : items) {
      acc[item].first += cell_mean(c);
      acc[item].second += 1;
    }
  }
  std::map<std::string, double> out;
  for (const auto& [item, c] : acc) out[item] = cell_mean(c);
  return out;
}

std::vector<double> scaled(std::vector<double> v, double sign) {
  for (double& x : v) x *= sign;
  return v;
}

double sd_of(const std::vector<double>& v) { return v.size() < 2 ? NA : std::sqrt(stats::variance(v, 1)); }

void fill_power(TaskComparison& t, const EvalsOptions& o, double sd_a, double sd_b, double sd_d, size_t n,
                bool paired) {
  double alpha = 1 - o.bootstrap.confidence;
  t.effect_for_power = std::isfinite(o.effect) ? std::fabs(o.effect)
                       : o.margin > 0          ? o.margin
                                               : std::fabs(t.improvement);
  if (!(t.effect_for_power > 0)) return;
  if (paired) {
    t.power = paired_power(t.effect_for_power, sd_d, n, alpha, true);
    t.needed = items_needed(t.effect_for_power, sd_d, alpha, o.power, true);
  } else {
    t.power = welch_power(t.effect_for_power, sd_a, sd_b, n, alpha, true);
    t.needed = seeds_needed(t.effect_for_power, sd_a, sd_b, alpha, o.power, true);
  }
  if (std::isfinite(t.power) && t.power < o.power) {
    std::string unit = paired ? "items" : "seeds per arm";
    t.warnings.push_back(fmt_number(static_cast<double>(n)) + " " + unit + " give power " + fmt_number(t.power, 2) +
                         " to detect an improvement of " + fmt_number(t.effect_for_power) + "; " +
                         (t.needed > 0 ? std::to_string(t.needed) + " " + unit + " are needed for power " +
                                             fmt_number(o.power, 2)
                                       : std::string("far more are needed")) +
                         " (a non-significant result here is absence of evidence, not evidence of no difference)");
  }
}

// One-sided p of "B is worse than A by more than the margin" from a t statistic's pieces.
double gate_p_value(double improvement, double se, double df, double margin) {
  if (!(se > 0) || !(df > 0)) return NA;
  return student_t_cdf((improvement + margin) / se, df);
}

void compare_seeds(TaskComparison& t, const std::vector<double>& a, const std::vector<double>& b,
                   const EvalsOptions& o) {
  t.welch = welch_t_test(a, b, o.bootstrap.confidence);
  t.hedges_g = hedges_g(a, b, o.bootstrap.confidence);
  t.mann_whitney = mann_whitney_u(a, b);
  t.improvement = t.welch->difference;
  t.ci_low = t.welch->ci_low;
  t.ci_high = t.welch->ci_high;
  t.interval = "Welch t interval";
  t.p_value = t.welch->p_value;
  double se = std::isfinite(t.welch->t) && t.welch->t != 0 ? t.welch->difference / t.welch->t : NA;
  t.gate_p = gate_p_value(t.improvement, se, t.welch->df, o.margin);
  if (std::isnan(t.p_value) && a.size() >= 2 && b.size() >= 2) {
    // Both arms constant: Welch's t is undefined; Mann-Whitney's rank test still is.
    t.p_value = t.mann_whitney->p_value;
    t.warnings.push_back("no spread within either arm: Welch's t is undefined, the p-value is Mann-Whitney's");
  }
  fill_power(t, o, sd_of(a), sd_of(b), NA, std::min(a.size(), b.size()), false);
}

TaskComparison compare_task(const std::string& task, Direction direction, const SeedItems& sa, const SeedItems& sb,
                            const EvalsOptions& o, uint64_t seed) {
  TaskComparison t;
  t.task = task;
  t.direction = direction;
  double sign = direction == Direction::lower ? -1 : 1;
  t.seeds_a = sa.size();
  t.seeds_b = sb.size();
  std::vector<double> seeds_a = seed_scores(sa), seeds_b = seed_scores(sb);
  t.mean_a = stats::mean(seeds_a);
  t.mean_b = stats::mean(seeds_b);
  BootstrapOptions bo = o.bootstrap;
  bo.seed = seed;
  if (!has_items(sa) && !has_items(sb)) {
    t.design = "seeds";
    compare_seeds(t, scaled(seeds_a, sign), scaled(seeds_b, sign), o);
    if (std::min(seeds_a.size(), seeds_b.size()) < 2) t.warnings.push_back("fewer than 2 seeds in an arm: no test");
    return t;
  }
  std::map<std::string, double> ia = item_means(sa), ib = item_means(sb);
  std::vector<std::string> shared;
  for (const auto& [item, v] : ia) {
    if (!item.empty() && ib.count(item)) shared.push_back(item);
  }
  auto every_seed_has = [&](const SeedItems& s) {
    for (const auto& [seed_name, items] : s) {
      for (const auto& item : shared) {
        if (!items.count(item)) return false;
      }
    }
    return true;
  };
  if (shared.size() >= 2 && sa.size() == 1 && sb.size() == 1) {
    t.design = "paired";
    t.items = shared.size();
    std::vector<double> d;
    for (const auto& item : shared) d.push_back(sign * (ib[item] - ia[item]));
    t.paired = paired_t_test(d, o.bootstrap.confidence);
    Interval boot = bootstrap_mean(d, bo);
    t.improvement = t.paired->mean_difference;
    t.ci_low = boot.low;
    t.ci_high = boot.high;
    t.interval = std::string("paired bootstrap over items (") +
                 (o.bootstrap.method == IntervalMethod::bca ? "BCa" : "percentile") + ", " +
                 std::to_string(bo.reps) + " resamples)" + (boot.note.empty() ? "" : "; " + boot.note);
    t.p_value = t.paired->p_value;
    double se = t.paired->sd_difference / std::sqrt(static_cast<double>(d.size()));
    t.gate_p = gate_p_value(t.improvement, se, t.paired->df, o.margin);
    if (t.paired->sd_difference == 0) {
      // Every item moved by the same amount: the t statistic is undefined, the sign test is exact. With n items all
      // on one side, P = 2 * 2^-n two-sided (0.5^n one-sided); no change at all is no evidence of a difference.
      double n = static_cast<double>(d.size());
      t.p_value = t.improvement == 0 ? 1.0 : std::min(1.0, 2 * std::pow(0.5, n));
      t.gate_p = t.improvement < -o.margin ? std::pow(0.5, n) : 1.0;
      t.warnings.push_back("every item changed by the same amount (" + fmt_number(t.improvement) +
                           "): the paired t test is undefined, the exact sign test gives the p-value");
    }
    fill_power(t, o, NA, NA, t.paired->sd_difference, d.size(), true);
    if (shared.size() < ia.size() || shared.size() < ib.size()) {
      t.warnings.push_back("only the " + std::to_string(shared.size()) + " items both arms answered are compared");
    }
    return t;
  }
  if (shared.size() >= 2 && every_seed_has(sa) && every_seed_has(sb)) {
    t.design = "two-level";
    t.items = shared.size();
    auto matrix = [&](const SeedItems& s) {
      std::vector<std::vector<double>> m;
      for (const auto& [seed_name, items] : s) {
        std::vector<double> row;
        for (const auto& item : shared) row.push_back(sign * cell_mean(items.at(item)));
        m.push_back(std::move(row));
      }
      return m;
    };
    Interval boot = two_level_bootstrap(matrix(sa), matrix(sb), bo);
    t.improvement = boot.estimate;
    t.ci_low = boot.low;
    t.ci_high = boot.high;
    t.interval = "two-level bootstrap: seeds of each arm, then the shared items (percentile, " +
                 std::to_string(bo.reps) + " resamples)";
    if (sa.size() >= 2 && sb.size() >= 2) {
      // The test is Welch's on the per-seed means: the seed is the unit that was replicated.
      std::vector<double> ma, mb;
      for (const auto& row : matrix(sa)) ma.push_back(stats::mean(row));
      for (const auto& row : matrix(sb)) mb.push_back(stats::mean(row));
      t.welch = welch_t_test(ma, mb, o.bootstrap.confidence);
      t.hedges_g = hedges_g(ma, mb, o.bootstrap.confidence);
      t.p_value = t.welch->p_value;
      double se = std::isfinite(t.welch->t) && t.welch->t != 0 ? t.welch->difference / t.welch->t : NA;
      t.gate_p = gate_p_value(t.welch->difference, se, t.welch->df, o.margin);
      fill_power(t, o, sd_of(ma), sd_of(mb), NA, std::min(ma.size(), mb.size()), false);
    }
    if (std::min(sa.size(), sb.size()) < o.min_bootstrap_seeds) {
      t.warnings.push_back("the bootstrap resamples " + std::to_string(std::min(sa.size(), sb.size())) +
                           " seeds of an arm; below " + std::to_string(o.min_bootstrap_seeds) +
                           " seeds its interval is too narrow (false-positive rate well above nominal, methods.md "
                           "§1.2), so it makes no significance claim");
    }
    return t;
  }
  t.design = "unpaired-items";
  std::vector<double> va, vb;
  for (const auto& [item, v] : ia) va.push_back(sign * v);
  for (const auto& [item, v] : ib) vb.push_back(sign * v);
  t.items = std::min(va.size(), vb.size());
  compare_seeds(t, va, vb, o);
  t.interval = "Welch t interval over items (not paired: the arms answered different items)";
  t.warnings.push_back("the arms share fewer than 2 items (or not every seed answered them): items compared as "
                       "independent samples, which ignores item difficulty");
  return t;
}

void decide(TaskComparison& t, const EvalsOptions& o) {
  double alpha = 1 - o.bootstrap.confidence;
  if (std::isfinite(t.p_holm)) {
    if (t.p_holm < alpha) {
      t.verdict = t.improvement > 0 ? "better" : "worse";
    } else {
      t.verdict = "no detectable difference";
    }
    return;
  }
  if (t.design == "two-level" && std::min(t.seeds_a, t.seeds_b) >= o.min_bootstrap_seeds &&
      std::isfinite(t.ci_low)) {
    t.verdict = t.ci_low > 0 ? "better" : t.ci_high < 0 ? "worse" : "no detectable difference";
    return;
  }
  t.verdict = "inconclusive";
}

}  // namespace

Result<EvalsReport> evaluate(const EvalData& data, const EvalsOptions& options) {
  if (data.cells.empty()) return Error{ErrorCode::invalid_argument, "no eval scores were read", ""};
  if (!(options.bootstrap.confidence > 0 && options.bootstrap.confidence < 1)) {
    return Error{ErrorCode::invalid_argument, "confidence must lie between 0 and 1", ""};
  }
  EvalsReport r;
  r.options = options;
  for (const auto& task : data.lower_is_better) {
    if (std::find(r.options.lower_is_better.begin(), r.options.lower_is_better.end(), task) ==
        r.options.lower_is_better.end()) {
      r.options.lower_is_better.push_back(task);  // the card lists every lower-is-better task, however it was known
    }
  }
  r.arms = data.arms;
  r.sources = data.sources;
  // arm -> task -> seed -> item -> score
  std::vector<std::vector<SeedItems>> cells(data.arms.size(), std::vector<SeedItems>(data.tasks.size()));
  for (const auto& c : data.cells) {
    auto& slot = cells[c.arm][c.task][c.seed][c.item];
    slot.first += c.score;
    slot.second += 1;
  }
  std::vector<uint32_t> arms;
  if (options.compare) {
    if (data.arms.size() < 2 && (options.a.empty() || options.b.empty())) {
      return Error{ErrorCode::invalid_argument,
                   "comparing needs two arms (checkpoints, algorithms); read only '" + data.arms.front() + "'", ""};
    }
    auto find = [&](const std::string& name, uint32_t fallback) -> Result<uint32_t> {
      if (name.empty()) return fallback;
      auto it = std::find(data.arms.begin(), data.arms.end(), name);
      if (it == data.arms.end()) return Error{ErrorCode::invalid_argument, "no arm named '" + name + "'", ""};
      return static_cast<uint32_t>(it - data.arms.begin());
    };
    auto ia = find(options.a, 0);
    if (!ia.ok()) return ia.error();
    auto ib = find(options.b, ia.value() == 0 ? 1 : 0);
    if (!ib.ok()) return ib.error();
    if (ia.value() == ib.value()) return Error{ErrorCode::invalid_argument, "A and B are the same arm", ""};
    arms = {ia.value(), ib.value()};
    r.a = data.arms[ia.value()];
    r.b = data.arms[ib.value()];
  } else {
    for (uint32_t i = 0; i < data.arms.size(); ++i) arms.push_back(i);
  }
  std::vector<std::string> lower = options.lower_is_better;
  lower.insert(lower.end(), data.lower_is_better.begin(), data.lower_is_better.end());
  auto direction_of = [&](const std::string& task) {
    return std::find(lower.begin(), lower.end(), task) != lower.end() ? Direction::lower : Direction::higher;
  };
  for (const auto& name : options.lower_is_better) {
    if (std::find(data.tasks.begin(), data.tasks.end(), name) == data.tasks.end()) {
      r.warnings.push_back("--lower-is-better names '" + name + "', which is not a task of the data");
    }
  }
  // Aggregates, one direction at a time, over the tasks every summarized arm has.
  for (Direction dir : {Direction::higher, Direction::lower}) {
    DirectionSummary s;
    s.direction = dir;
    std::vector<uint32_t> tasks;
    for (uint32_t t = 0; t < data.tasks.size(); ++t) {
      if (direction_of(data.tasks[t]) != dir) continue;
      bool all = std::all_of(arms.begin(), arms.end(), [&](uint32_t a) { return !cells[a][t].empty(); });
      if (all) {
        tasks.push_back(t);
        s.tasks.push_back(data.tasks[t]);
      } else {
        bool any = std::any_of(arms.begin(), arms.end(), [&](uint32_t a) { return !cells[a][t].empty(); });
        if (any) s.notes.push_back("task '" + data.tasks[t] + "' is left out: not every arm has scores on it");
      }
    }
    if (tasks.empty()) continue;
    std::vector<TaskScores> matrices;
    for (uint32_t a : arms) {
      TaskScores m;
      for (uint32_t t : tasks) m.push_back(seed_scores(cells[a][t]));
      matrices.push_back(std::move(m));
    }
    std::vector<const TaskScores*> all;
    for (const auto& m : matrices) all.push_back(&m);
    std::vector<double> tau = tau_grid(all, options.profile_points);
    bool single_run = false;
    for (size_t k = 0; k < arms.size(); ++k) {
      const TaskScores& m = matrices[k];
      ArmSummary arm;
      arm.arm = data.arms[arms[k]];
      arm.tasks = m.size();
      arm.runs_min = arm.runs_max = m.front().size();
      for (const auto& task : m) {
        arm.runs_min = std::min(arm.runs_min, task.size());
        arm.runs_max = std::max(arm.runs_max, task.size());
      }
      BootstrapOptions bo = options.bootstrap;
      bo.seed = options.bootstrap.seed + 1000 * k;
      arm.mean = stratified_bootstrap(m, Aggregate::mean, bo);
      arm.median = stratified_bootstrap(m, Aggregate::median, bo);
      arm.iqm = stratified_bootstrap(m, Aggregate::iqm, bo);
      if (dir == Direction::higher) {
        arm.optimality_gap = stratified_bootstrap(m, Aggregate::optimality_gap, bo, options.gamma);
      } else {
        arm.optimality_gap.note = "defined for higher-is-better scores normalized so that gamma is the target";
      }
      BootstrapOptions po = bo;
      po.reps = options.profile_reps;
      po.method = IntervalMethod::percentile;
      arm.profile = performance_profile(m, tau, po);
      if (arm.runs_max <= 1) {
        // A zero-width interval would read as certainty: there is no run-to-run spread to resample.
        for (auto* i : {&arm.mean, &arm.median, &arm.iqm, &arm.optimality_gap}) {
          i->low = i->high = NA;
          if (i->note.empty()) i->note = "1 run per task: no interval";
        }
        single_run = true;
      }
      s.arms.push_back(std::move(arm));
    }
    if (options.compare) {
      double sign = dir == Direction::lower ? -1 : 1;
      TaskScores xa = matrices[0], xb = matrices[1];
      for (auto* m : {&xa, &xb}) {
        for (auto& task : *m) task = scaled(task, sign);
      }
      BootstrapOptions po = options.bootstrap;
      po.reps = options.profile_reps;
      po.seed = options.bootstrap.seed + 7;
      s.probability_of_improvement = probability_of_improvement_interval(xb, xa, po);
      if (single_run) {
        s.probability_of_improvement.low = s.probability_of_improvement.high = NA;
        s.probability_of_improvement.note = "1 run per task: no interval";
      }
    }
    if (single_run) {
      s.notes.push_back("an arm has one run (seed) per task: the aggregates have no run-to-run spread to resample, "
                        "so they carry no interval; the per-task comparisons above use the items");
    }
    r.summaries.push_back(std::move(s));
  }
  if (options.compare) {
    for (uint32_t t = 0; t < data.tasks.size(); ++t) {
      const SeedItems& sa = cells[arms[0]][t];
      const SeedItems& sb = cells[arms[1]][t];
      if (sa.empty() || sb.empty()) continue;
      r.tasks.push_back(compare_task(data.tasks[t], direction_of(data.tasks[t]), sa, sb, options,
                                     options.bootstrap.seed + 17 * (t + 1)));
    }
    if (r.tasks.empty()) return Error{ErrorCode::invalid_argument, "A and B have no task in common", ""};
    std::vector<double> p, g;
    for (const auto& t : r.tasks) {
      p.push_back(t.p_value);
      g.push_back(t.gate_p);
    }
    std::vector<double> ph = holm_adjust(p), gh = holm_adjust(g);
    double alpha = 1 - options.bootstrap.confidence;
    bool better = false, worse = false, decided = false;
    for (size_t i = 0; i < r.tasks.size(); ++i) {
      TaskComparison& t = r.tasks[i];
      t.p_holm = ph[i];
      t.gate_p_holm = gh[i];
      decide(t, options);
      better |= t.verdict == "better";
      worse |= t.verdict == "worse";
      decided |= t.verdict != "inconclusive";
      bool fails = std::isfinite(t.gate_p_holm) ? t.gate_p_holm < alpha
                                                : std::isfinite(t.ci_high) && t.ci_high < -options.margin &&
                                                      t.design == "two-level" &&
                                                      std::min(t.seeds_a, t.seeds_b) >= options.min_bootstrap_seeds;
      if (fails) {
        r.gate_failed = true;
        r.gate_reasons.push_back(t.task + ": B is worse than A by " + fmt_number(-t.improvement) + " (" +
                                 fmt_percent(options.bootstrap.confidence) + " interval of the improvement " +
                                 fmt_number(t.ci_low) + " to " + fmt_number(t.ci_high) + "), beyond the margin " +
                                 fmt_number(options.margin) + (r.tasks.size() > 1 ? ", Holm-corrected" : ""));
      }
    }
    r.verdict = better && worse ? "mixed" : worse ? "worse" : better ? "better" : decided ? "no detectable difference"
                                                                                        : "inconclusive";
    size_t nb = 0, nw = 0;
    for (const auto& t : r.tasks) {
      nb += t.verdict == "better";
      nw += t.verdict == "worse";
    }
    r.summary = r.b + " vs " + r.a + ": " + r.verdict + " (" + std::to_string(nb) + " better, " +
                std::to_string(nw) + " worse of " + std::to_string(r.tasks.size()) + " tasks at " +
                fmt_percent(options.bootstrap.confidence) + " confidence, Holm-corrected)";
  } else {
    r.verdict = "aggregate";
    r.summary = "aggregates of " + std::to_string(arms.size()) + " arms over " + std::to_string(data.tasks.size()) +
                " tasks";
  }
  return r;
}

}  // namespace rldk::evals
