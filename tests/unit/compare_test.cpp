// Step alignment and per-signal diff statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "rldk/compare.h"
#include "test_support.h"

namespace {

rldk::Series series(const std::string& name, std::vector<int64_t> steps, std::vector<double> values) {
  rldk::Series s;
  s.name = name;
  s.steps = std::move(steps);
  s.values = std::move(values);
  s.wall_times.assign(s.steps.size(), rldk_test::NaN);
  s.segments.assign(s.steps.size(), 0);
  return s;
}

TEST(StepValues, LastSegmentWinsAfterARestart) {
  // Steps 1..4, then the trainer resumed from step 3 and logged 3..5 again.
  auto s = series("policy/kl", {1, 2, 3, 4, 3, 4, 5}, {1, 2, 3, 4, 30, 40, 50});
  rldk::StepValues v = rldk::step_values(s);
  EXPECT_EQ(v.steps, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(v.values, (std::vector<double>{1, 2, 30, 40, 50}));
  EXPECT_EQ(v.overridden, 2u);
}

TEST(Align, DifferentLoggingIntervalsMeetAtCommonSteps) {
  rldk::StepValues a{{0, 10, 20, 30, 40}, {0, 1, 2, 3, 4}, 0};
  rldk::StepValues b{{0, 5, 10, 15, 20, 25}, {0, .5, 1, 1.5, 2, 2.5}, 0};
  rldk::AlignedPair p = rldk::align(a, b);
  EXPECT_EQ(p.steps, (std::vector<int64_t>{0, 10, 20}));
  EXPECT_EQ(p.a, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(p.b, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(p.only_a, 2u);
  EXPECT_EQ(p.only_b, 3u);
}

rldk::Run make_run(const std::string& id, std::map<std::string, rldk::Series> series) {
  rldk::Run r;
  r.run_id = id;
  r.source.path = id + ".jsonl";
  r.series = std::move(series);
  return r;
}

TEST(DiffRuns, StatisticsAndFirstSignal) {
  std::vector<int64_t> steps;
  std::vector<double> kl_a, kl_b, reward_a, reward_b;
  for (int i = 1; i <= 100; ++i) {
    steps.push_back(i);
    double wiggle = 0.001 * ((i * 7919) % 13 - 6);  // deterministic noise
    kl_a.push_back(0.05 + wiggle);
    kl_b.push_back(0.05 + wiggle + (i >= 60 ? 0.05 : 0.0));
    reward_a.push_back(0.5 + wiggle);
    reward_b.push_back(0.5 + wiggle + (i >= 80 ? 0.2 : 0.0));
  }
  auto a = make_run("a", {{"policy/kl", series("policy/kl", steps, kl_a)},
                          {"reward/mean", series("reward/mean", steps, reward_a)}});
  auto b = make_run("b", {{"policy/kl", series("policy/kl", steps, kl_b)},
                          {"reward/mean", series("reward/mean", steps, reward_b)}});
  auto report = rldk::diff_runs(a, b);
  ASSERT_TRUE(report.ok()) << rldk::to_string(report.error());
  ASSERT_EQ(report->signals.size(), 2u);
  EXPECT_EQ(report->signals[0].name, "policy/kl");  // default order: KL first
  const auto& kl = report->signals[0];
  EXPECT_EQ(kl.common_steps, 100u);
  EXPECT_NEAR(kl.max_abs_delta, 0.05, 1e-12);
  EXPECT_GE(kl.max_abs_delta_step, 60);  // every step from 60 differs by 0.05, up to rounding
  EXPECT_NEAR(kl.mean_drift, 0.05 * 41 / 100, 1e-12);
  ASSERT_TRUE(kl.first_difference_step.has_value());
  EXPECT_EQ(*kl.first_difference_step, 60);
  EXPECT_TRUE(kl.divergence.diverged);
  EXPECT_EQ(kl.divergence.onset_step, 60);
  EXPECT_EQ(report->first_signal, "policy/kl");
  EXPECT_TRUE(report->signals[1].divergence.diverged);
  EXPECT_EQ(report->signals[1].divergence.onset_step, 80);
}

TEST(DiffRuns, IdenticalRunsMatch) {
  auto s = series("policy/kl", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 2, 3, 2, 1, 2, 3, 2, 1, 2});
  auto a = make_run("a", {{"policy/kl", s}});
  auto b = make_run("b", {{"policy/kl", s}});
  auto report = rldk::diff_runs(a, b);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->signals[0].divergence.diverged);
  EXPECT_FALSE(report->signals[0].first_difference_step.has_value());
  EXPECT_EQ(report->first_signal, "");
}

TEST(DiffRuns, MissingSignalsAreNamedAndNoCommonSignalIsAnError) {
  auto a = make_run("a", {{"policy/kl", series("policy/kl", {1, 2}, {1, 2})}});
  auto b = make_run("b", {{"reward/mean", series("reward/mean", {1, 2}, {1, 2})}});
  rldk::DiffOptions options;
  options.signals = {"policy/kl"};
  auto report = rldk::diff_runs(a, b, options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message.find("policy/kl (absent from B)"), std::string::npos);
  EXPECT_FALSE(rldk::diff_runs(a, b).ok());  // nothing in common at all
}

}  // namespace
