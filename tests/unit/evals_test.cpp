// Numerics of rldk evals against values computed with rliable's definitions and SciPy (tests/python/test_evals.py
// holds the same code to the real libraries on random inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "rldk/evals.h"

namespace rldk::evals {
namespace {

TEST(EvalsAggregates, IqmTrimsFloorOfAQuarterFromEachEnd) {
  // 7 pooled scores: int(0.25 * 7) = 1 cut from each end, so the mean of the middle 5.
  TaskScores s = {{1, 2, 3}, {100, -50, 4, 5}};
  EXPECT_DOUBLE_EQ(aggregate_iqm(s), (1 + 2 + 3 + 4 + 5) / 5.0);
  // 3 values: nothing is trimmed (int(0.75) = 0).
  EXPECT_DOUBLE_EQ(aggregate_iqm({{1, 2, 9}}), 4.0);
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(trimmed_mean(v, 0.25), 2.5);
}

TEST(EvalsAggregates, MeanMedianAndOptimalityGapOfTaskMeans) {
  TaskScores s = {{0.2, 0.4}, {0.9, 1.1}, {0.5, 0.5}};
  EXPECT_DOUBLE_EQ(aggregate_mean(s), (0.3 + 1.0 + 0.5) / 3);
  EXPECT_DOUBLE_EQ(aggregate_median(s), 0.5);
  // min(x, 1) averaged over all six scores.
  EXPECT_NEAR(optimality_gap(s), 1 - (0.2 + 0.4 + 0.9 + 1.0 + 0.5 + 0.5) / 6, 1e-15);
}

TEST(EvalsAggregates, ProbabilityOfImprovementCountsTiesAsHalf) {
  TaskScores x = {{1, 2}, {5}};
  TaskScores y = {{2, 0, 1}, {5}};
  // Task 0: pairs (1,2)=0 (1,0)=1 (1,1)=.5 (2,2)=.5 (2,0)=1 (2,1)=1 -> 4/6; task 1: a tie, 1/2.
  EXPECT_DOUBLE_EQ(probability_of_improvement(x, y), (4.0 / 6 + 0.5) / 2);
  EXPECT_DOUBLE_EQ(probability_of_improvement(x, x), 0.5);
}

TEST(EvalsBootstrap, SameSeedSameIntervalAndIntervalCoversEstimate) {
  TaskScores s = {{0.1, 0.5, 0.3, 0.7, 0.2}, {0.9, 0.4, 0.6, 0.8, 0.5}, {0.3, 0.2, 0.35, 0.1, 0.6}};
  BootstrapOptions o;
  o.reps = 2000;
  o.seed = 7;
  Interval a = stratified_bootstrap(s, Aggregate::iqm, o);
  Interval b = stratified_bootstrap(s, Aggregate::iqm, o);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, a.estimate);
  EXPECT_GT(a.high, a.estimate);
  o.seed = 8;
  Interval c = stratified_bootstrap(s, Aggregate::iqm, o);
  EXPECT_NE(a.low, c.low);
  o.method = IntervalMethod::bca;
  Interval d = stratified_bootstrap(s, Aggregate::mean, o);
  EXPECT_TRUE(d.note.empty()) << d.note;
  EXPECT_LT(d.low, d.estimate);
}

TEST(EvalsBootstrap, MeanOfConstantValuesHasAZeroWidthInterval) {
  std::vector<double> v(10, 0.5);
  BootstrapOptions o;
  o.reps = 500;
  Interval i = bootstrap_mean(v, o);
  EXPECT_EQ(i.low, 0.5);
  EXPECT_EQ(i.high, 0.5);
}

TEST(EvalsProfiles, FractionAboveTauAveragedOverTasks) {
  TaskScores s = {{0.1, 0.5}, {0.9, 0.7}};
  std::vector<double> tau = {0.0, 0.6, 1.0};
  BootstrapOptions o;
  o.reps = 200;
  Profile p = performance_profile(s, tau, o);
  ASSERT_EQ(p.fraction.size(), 3u);
  EXPECT_DOUBLE_EQ(p.fraction[0], 1.0);
  EXPECT_DOUBLE_EQ(p.fraction[1], 0.5);
  EXPECT_DOUBLE_EQ(p.fraction[2], 0.0);
  EXPECT_LE(p.low[1], 0.5);
  EXPECT_GE(p.high[1], 0.5);
}

TEST(EvalsTests, WelchMatchesScipy) {
  std::vector<double> a = {0.61, 0.55, 0.70, 0.48, 0.66}, b = {0.72, 0.69, 0.81, 0.58, 0.77, 0.74};
  WelchTest w = welch_t_test(a, b);
  // scipy.stats.ttest_ind(b, a, equal_var=False) and its confidence_interval(0.95).
  EXPECT_NEAR(w.t, 2.3299360928693895, 1e-12);
  EXPECT_NEAR(w.df, 8.26021349124521, 1e-10);
  EXPECT_NEAR(w.p_value, 0.04719377921486964, 1e-12);
  EXPECT_NEAR(w.ci_low, 0.0018545630343485553, 1e-10);
  EXPECT_NEAR(w.ci_high, 0.23481210363231803, 1e-10);
}

TEST(EvalsTests, MannWhitneyExactAndAsymptoticMatchScipy) {
  std::vector<double> a = {0.61, 0.55, 0.70, 0.48, 0.66}, b = {0.72, 0.69, 0.81, 0.58, 0.77, 0.74};
  MannWhitney m = mann_whitney_u(a, b);
  EXPECT_TRUE(m.exact);
  EXPECT_EQ(m.u, 26.0);
  EXPECT_NEAR(m.p_value, 0.05194805194805195, 1e-12);
  std::vector<double> a2 = {1, 2, 2, 3, 4, 5, 5, 6, 7, 8}, b2 = {2, 3, 3, 4, 6, 6, 7, 8, 9, 9, 10};
  MannWhitney t = mann_whitney_u(a2, b2);
  EXPECT_FALSE(t.exact);
  EXPECT_EQ(t.u, 76.5);
  EXPECT_NEAR(t.p_value, 0.13701329623456726, 1e-12);
}

TEST(EvalsTests, PairedTMatchesScipy) {
  std::vector<double> d = {0.1, -0.05, 0.2, 0.15, 0.0, 0.3, 0.05};
  PairedTest p = paired_t_test(d);
  EXPECT_NEAR(p.t, 2.3521876807019253, 1e-12);
  EXPECT_NEAR(p.p_value, 0.05688809016760291, 1e-12);
  EXPECT_NEAR(p.ci_low, -0.004314714486867446, 1e-10);
  EXPECT_NEAR(p.ci_high, 0.21860042877258173, 1e-10);
}

TEST(EvalsTests, StudentTMatchesScipy) {
  EXPECT_NEAR(student_t_quantile(0.975, 3), 3.1824463052837078, 1e-11);
  EXPECT_NEAR(student_t_quantile(0.05, 7.5), -1.8757474792112883, 1e-11);
  EXPECT_NEAR(student_t_cdf(-1.3, 4.2), 0.13017877093782693, 1e-12);
}

TEST(EvalsTests, HolmStepDown) {
  std::vector<double> p = {0.01, 0.04, 0.03, 0.005, NA};
  std::vector<double> adj = holm_adjust(p);
  EXPECT_DOUBLE_EQ(adj[0], 0.03);
  EXPECT_DOUBLE_EQ(adj[1], 0.06);
  EXPECT_DOUBLE_EQ(adj[2], 0.06);
  EXPECT_DOUBLE_EQ(adj[3], 0.02);
  EXPECT_TRUE(std::isnan(adj[4]));
}

TEST(EvalsPower, SeedsNeededTableOfMethods) {
  // methods.md §1.2: seeds per arm for power 0.8 at effect d (equal SDs of 1), alpha 0.05.
  const double d[] = {0.5, 0.8, 1.0, 1.5, 2.0, 3.0};
  const size_t one_sided[] = {51, 21, 14, 7, 5, 3};
  const size_t two_sided[] = {64, 26, 17, 9, 6, 4};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(seeds_needed(d[i], 1, 1, 0.05, 0.8, false), one_sided[i]) << d[i];
    EXPECT_EQ(seeds_needed(d[i], 1, 1, 0.05, 0.8, true), two_sided[i]) << d[i];
  }
  EXPECT_EQ(seeds_needed(0, 1, 1, 0.05, 0.8, true), 0u);
  size_t n = items_needed(0.1, 1, 0.05, 0.8, true);
  EXPECT_GE(paired_power(0.1, 1, n, 0.05, true), 0.8);
  EXPECT_LT(paired_power(0.1, 1, n - 1, 0.05, true), 0.8);
}

TEST(EvalsTwoLevel, IntervalWidensWithSeedSpread) {
  std::vector<std::vector<double>> a = {{0, 1, 0, 1, 1, 0, 1, 0}, {1, 1, 0, 1, 1, 0, 1, 0}};
  std::vector<std::vector<double>> b = {{1, 1, 0, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 0, 1, 1}};
  BootstrapOptions o;
  o.reps = 2000;
  Interval i = two_level_bootstrap(a, b, o);
  EXPECT_NEAR(i.estimate, (13.0 - 9.0) / 16, 1e-15);
  EXPECT_LT(i.low, i.estimate);
  EXPECT_GT(i.high, i.estimate);
}

}  // namespace
}  // namespace rldk::evals

namespace rldk::evals {
namespace {

EvalData data_of(const std::vector<std::tuple<std::string, std::string, std::string, std::string, double>>& rows) {
  EvalData d;
  for (const auto& [arm, seed, task, item, score] : rows) {
    EvalCell c;
    c.arm = d.arm_index(arm);
    c.task = d.task_index(task);
    c.seed = seed;
    c.item = item;
    c.score = score;
    d.cells.push_back(c);
  }
  return d;
}

TEST(EvalsReport, DesignFollowsTheData) {
  std::vector<std::tuple<std::string, std::string, std::string, std::string, double>> rows;
  for (int i = 0; i < 40; ++i) {
    std::string item = std::to_string(i);
    rows.emplace_back("a", "", "paired_task", item, i % 3 == 0 ? 1.0 : 0.0);
    rows.emplace_back("b", "", "paired_task", item, i % 3 == 0 || i % 5 == 0 ? 1.0 : 0.0);
  }
  for (int s = 0; s < 4; ++s) {
    rows.emplace_back("a", std::to_string(s), "seed_task", "", 0.5 + 0.01 * s);
    rows.emplace_back("b", std::to_string(s), "seed_task", "", 0.3 + 0.01 * s);  // lower is better here
  }
  EvalsOptions o;
  o.bootstrap.reps = 1000;
  o.lower_is_better = {"seed_task"};
  o.margin = 0.05;
  auto r = evaluate(data_of(rows), o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tasks.size(), 2u);
  const TaskComparison& paired = r->tasks[0];
  EXPECT_EQ(paired.design, "paired");
  EXPECT_EQ(paired.items, 40u);
  EXPECT_TRUE(paired.paired.has_value());
  EXPECT_GT(paired.improvement, 0);
  const TaskComparison& seeds = r->tasks[1];
  EXPECT_EQ(seeds.design, "seeds");
  EXPECT_EQ(seeds.direction, Direction::lower);
  EXPECT_NEAR(seeds.improvement, 0.2, 1e-12);  // B's scores are lower, and lower is better
  EXPECT_EQ(seeds.verdict, "better");
  EXPECT_FALSE(r->gate_failed);
  // Aggregates never mix directions: one summary per direction.
  ASSERT_EQ(r->summaries.size(), 2u);
  EXPECT_EQ(r->summaries[0].tasks, std::vector<std::string>{"paired_task"});
  EXPECT_EQ(r->summaries[1].tasks, std::vector<std::string>{"seed_task"});
  EXPECT_TRUE(std::isnan(r->summaries[1].arms[0].optimality_gap.estimate));
  // Swapping the arms makes B worse beyond the margin: the gate fails and names the task.
  o.a = "b";
  o.b = "a";
  auto swapped = evaluate(data_of(rows), o);
  ASSERT_TRUE(swapped.ok());
  EXPECT_TRUE(swapped->gate_failed);
  ASSERT_FALSE(swapped->gate_reasons.empty());
  EXPECT_EQ(swapped->gate_reasons[0].rfind("seed_task", 0), 0u);
}

TEST(EvalsReport, TwoLevelWithFewSeedsMakesNoClaim) {
  std::vector<std::tuple<std::string, std::string, std::string, std::string, double>> rows;
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < 30; ++i) {
      rows.emplace_back("a", std::to_string(s), "t", std::to_string(i), (i + s) % 2);
      rows.emplace_back("b", std::to_string(s), "t", std::to_string(i), (i + s) % 3 ? 1.0 : 0.0);
    }
  }
  rows.emplace_back("b", "9", "t", "0", 1.0);  // B's extra seed answered only one item: not every seed has all
  EvalsOptions o;
  o.bootstrap.reps = 500;
  auto r = evaluate(data_of(rows), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tasks[0].design, "unpaired-items");
  rows.pop_back();
  r = evaluate(data_of(rows), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tasks[0].design, "two-level");
  EXPECT_TRUE(r->tasks[0].welch.has_value());
  bool warned = false;
  for (const auto& w : r->tasks[0].warnings) warned |= w.find("no significance claim") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(EvalsReport, ErrorsOnOneArmOrUnknownArm) {
  EvalsOptions o;
  EXPECT_FALSE(evaluate(data_of({{"a", "", "t", "", 1.0}}), o).ok());
  o.a = "x";
  EXPECT_FALSE(evaluate(data_of({{"a", "", "t", "", 1.0}, {"b", "", "t", "", 1.0}}), o).ok());
  o.a.clear();
  o.compare = false;
  EXPECT_TRUE(evaluate(data_of({{"a", "", "t", "", 1.0}}), o).ok());
}

}  // namespace
}  // namespace rldk::evals

namespace rldk::evals {
namespace {

TEST(EvalsBootstrap, IqmFastPathGivesTheGeneralPathsInterval) {
  TaskScores s = {{0.1, 0.5, 0.3, 0.7}, {0.9, 0.4, 0.6, 0.8}, {0.3, 0.2, 0.35, 0.1}};
  BootstrapOptions o;
  o.reps = 3000;
  o.seed = 5;
  Interval fast = stratified_bootstrap(s, Aggregate::iqm, o);
  Interval general = stratified_bootstrap(s, [](const TaskScores& x) { return aggregate_iqm(x); }, o);
  EXPECT_EQ(fast.low, general.low);
  EXPECT_EQ(fast.high, general.high);
  EXPECT_EQ(fast.estimate, general.estimate);
}

}  // namespace
}  // namespace rldk::evals

namespace rldk::evals {
namespace {

TEST(EvalsReport, EveryItemImprovedByTheSameAmountIsDecidedByTheSignTest) {
  std::vector<std::tuple<std::string, std::string, std::string, std::string, double>> rows;
  for (int i = 0; i < 20; ++i) {
    rows.emplace_back("a", "", "t", std::to_string(i), 0.0);
    rows.emplace_back("b", "", "t", std::to_string(i), 1.0);
  }
  EvalsOptions o;
  o.bootstrap.reps = 200;
  auto r = evaluate(data_of(rows), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tasks[0].verdict, "better");
  EXPECT_DOUBLE_EQ(r->tasks[0].p_value, 2 * std::pow(0.5, 20));
  o.a = "b";
  o.b = "a";
  r = evaluate(data_of(rows), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tasks[0].verdict, "worse");
  EXPECT_TRUE(r->gate_failed);
}

}  // namespace
}  // namespace rldk::evals

namespace rldk::evals {
namespace {

TEST(EvalsLengthControlled, InterceptIsThePreferenceAtEqualLength) {
  // The judge prefers B more the longer B is: raw win rate 0.55, 0.5 at equal length.
  std::vector<double> pref, diff;
  for (int i = 0; i < 200; ++i) {
    double d = (i % 4) * 10.0 - 10.0;  // -10, 0, 10, 20
    diff.push_back(d);
    pref.push_back(0.5 + 0.01 * d);
  }
  BootstrapOptions o;
  o.reps = 500;
  LengthControlled r = length_controlled_win_rate(pref, diff, o);
  EXPECT_EQ(r.n, 200u);
  EXPECT_NEAR(r.win_rate.estimate, 0.55, 1e-12);
  EXPECT_NEAR(r.intercept.estimate, 0.5, 1e-12);
  EXPECT_NEAR(r.slope.estimate, 0.01, 1e-12);
  std::vector<double> same(200, 5.0);
  LengthControlled flat = length_controlled_win_rate(pref, same, o);
  EXPECT_TRUE(std::isnan(flat.intercept.estimate));
  EXPECT_FALSE(flat.intercept.note.empty());
}

}  // namespace
}  // namespace rldk::evals

namespace rldk::evals {
namespace {

TEST(EvalsSuites, BuiltinSuitesParseAndNameKnownProbes) {
  const Suites& s = builtin_suites();
  for (const char* name : {"quick", "comprehensive", "safety", "integrity", "performance", "trust",
                           "training_metrics"}) {
    ASSERT_NE(s.suite(name), nullptr) << name;
  }
  ASSERT_NE(s.probe("toxicity"), nullptr);
  EXPECT_EQ(s.probe("toxicity")->direction, "lower");
}

TEST(EvalsSuites, BadSuiteFilesAreErrors) {
  EXPECT_FALSE(suites_from_yaml("probes: {}\n", "x").ok());
  EXPECT_FALSE(suites_from_yaml("probes: {a: {columns: [x], direction: up}}\nsuites: {}\n", "x").ok());
  EXPECT_FALSE(suites_from_yaml("probes: {a: {columns: [x], direction: higher}}\nsuites: {s: {probes: [b]}}\n", "x")
                   .ok());
  auto ok = suites_from_yaml("probes: {a: {columns: [x], direction: higher}}\nsuites: {s: {probes: [a]}}\n", "x");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->suite("s")->probes.size(), 1u);
}

}  // namespace
}  // namespace rldk::evals
