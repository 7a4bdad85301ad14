// src/core/stats: the one home of robust statistics, change points and trend tests. Reference values are computed
// by hand or with NumPy/SciPy (numbers in the comments).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/change_point.h"
#include "stats/cusum.h"
#include "stats/robust.h"
#include "stats/trend.h"

namespace rldk::stats {
namespace {

TEST(Robust, MedianOfEvenCountIsTheMeanOfTheTwoMiddleValues) {
  std::vector<double> odd = {5, 1, 3};
  EXPECT_DOUBLE_EQ(median_in_place(odd), 3.0);
  std::vector<double> even = {4, 1, 3, 2};  // numpy.median -> 2.5
  EXPECT_DOUBLE_EQ(median_in_place(even), 2.5);
  std::vector<double> none;
  EXPECT_TRUE(std::isnan(median_in_place(none)));
}

TEST(Robust, MedianAndSigmaIsScaledMad) {
  std::vector<double> v = {1, 2, 3, 4, 100};  // median 3, |dev| = 2 1 0 1 97 -> MAD 1
  double median = 0, sigma = 0;
  median_and_sigma(v, median, sigma);
  EXPECT_DOUBLE_EQ(median, 3.0);
  EXPECT_DOUBLE_EQ(sigma, MAD_TO_SIGMA);
}

TEST(Robust, DifferenceNoiseIgnoresALinearTrend) {
  std::vector<double> ramp;
  for (int i = 0; i < 50; ++i) ramp.push_back(10.0 * i);
  EXPECT_DOUBLE_EQ(difference_noise(ramp), 0.0);
}

TEST(Robust, MeanAndMedianOfThree) {
  std::vector<double> v = {1, 2, 3, 10};
  EXPECT_DOUBLE_EQ(mean(v), 4.0);
  EXPECT_TRUE(std::isnan(mean(std::vector<double>{})));
  EXPECT_DOUBLE_EQ(median_of_three(3, 1, 2), 2.0);
  EXPECT_DOUBLE_EQ(median_of_three(1, 1, 5), 1.0);
  EXPECT_DOUBLE_EQ(median_of_three(-1, 7, 7), 7.0);
}

TEST(Robust, SecondDifferenceNoiseCancelsALinearTrendAndScalesTheNoise) {
  std::vector<double> scratch;
  std::vector<double> trend = {1, 3, 5, 7, 9, 11};
  EXPECT_DOUBLE_EQ(second_difference_noise(trend, scratch), 0.0);
  // Too few evals for two second differences: no estimate.
  EXPECT_DOUBLE_EQ(second_difference_noise(std::vector<double>{1, 5, 2}, scratch), 0.0);
  // A zigzag on a trend: second differences -2, 2, -2, 2 -> median 0 (the mean of the two middle values), every
  // |deviation| 2 -> sigma = 1.4826 x 2 / sqrt 6.
  std::vector<double> zigzag = {0, 11, 20, 31, 40, 51};
  EXPECT_NEAR(second_difference_noise(zigzag, scratch), MAD_TO_SIGMA * 2.0 / std::sqrt(6.0), 1e-12);
}

TEST(Cusum, AccumulatesBeyondTheAllowanceAndDatesTheStart) {
  Cusum c;
  const double k = 0.5, h = 4.0;
  // In control: |z| <= k keeps both sides at zero.
  for (int64_t step = 1; step <= 10; ++step) c.update(step % 2 ? 0.4 : -0.4, k, step);
  EXPECT_DOUBLE_EQ(c.up, 0.0);
  EXPECT_DOUBLE_EQ(c.down, 0.0);
  // A shift of +1.5 sigma from step 11: C+ grows by 1 per point and crosses h = 4 at the fifth point (step 15).
  int64_t alarm = 0;
  for (int64_t step = 11; step <= 20 && alarm == 0; ++step) {
    c.update(1.5, k, step);
    if (c.up_exceeds(h)) alarm = step;
  }
  EXPECT_EQ(alarm, 15);
  EXPECT_DOUBLE_EQ(c.up, 5.0);
  EXPECT_EQ(c.up_start, 11);  // the last step at which C+ was within k of zero: the change began there
  EXPECT_FALSE(c.down_exceeds(h));
  c.reset();
  EXPECT_DOUBLE_EQ(c.up, 0.0);
}

TEST(PageHinkley, DetectsADropAgainstTheRunningMean) {
  PageHinkley ph;
  const double delta = 0.5, alpha = 1.0, threshold = 5.0;
  for (int i = 0; i < 20; ++i) ph.update(0.0, delta, alpha);
  EXPECT_DOUBLE_EQ(ph.down, 0.0);
  int alarm = -1;
  for (int i = 0; i < 20 && alarm < 0; ++i) {
    ph.update(-3.0, delta, alpha);
    if (ph.down_reaches(threshold)) alarm = i;
  }
  // m after the first drop: -3/21; S- = 0 + (m - z - delta) = -0.1429 + 3 - 0.5 = 2.357; the second adds about 2.23.
  EXPECT_EQ(alarm, 2);
  EXPECT_FALSE(ph.up_reaches(threshold));
  ph.restart();
  EXPECT_DOUBLE_EQ(ph.down, 0.0);
  EXPECT_EQ(ph.count, 23u);  // the running mean keeps its history
  ph.reset();
  EXPECT_EQ(ph.count, 0u);
}

TEST(ChangePoint, DepartureFromZeroTellsAStepFromARamp) {
  std::vector<double> step = {0, 0, 0, 0, 2, 2, 2, 2};
  Departure s = departure_from_zero(step, step.size());
  EXPECT_EQ(s.start, 4u);
  EXPECT_FALSE(s.ramp);
  EXPECT_DOUBLE_EQ(s.size, 2.0);
  std::vector<double> ramp = {0, 0, 0, 1, 2, 3, 4, 5};
  Departure r = departure_from_zero(ramp, ramp.size());
  EXPECT_EQ(r.start, 3u);
  EXPECT_TRUE(r.ramp);
  EXPECT_DOUBLE_EQ(r.size, 1.0);
  // The start may not lie past the candidates: a step at index 4 seen with only 3 candidates starts at index 2.
  EXPECT_LE(departure_from_zero(step, 3).start, 2u);
  Departure none = departure_from_zero(step, 0);
  EXPECT_EQ(none.start, step.size() - 1);
  EXPECT_DOUBLE_EQ(none.size, 0.0);
}

TEST(ChangePoint, RampStartDatesARampAndAStep) {
  std::vector<double> ramp = {1, 1, 1, 1, 1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ramp_start(ramp), 5u);
  std::vector<double> step = {0, 0, 0, 0, 0, 0, 0, 9};
  EXPECT_EQ(ramp_start(step), 7u);
  std::vector<double> from_start = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ramp_start(from_start), 0u);
  std::vector<double> tiny = {1, 2};
  EXPECT_EQ(ramp_start(tiny), 0u);
}

// A change that levels off again: the hinge tilts its line through the new level and starts early; the levelling
// model dates the jump and the ramp, and on a ramp to the last point agrees with the hinge.
TEST(ChangePoint, RampStartLevellingDatesAJumpThatHoldsItsLevel) {
  std::vector<double> jump;
  for (int i = 0; i < 30; ++i) jump.push_back(0.5 + 0.02 * ((i * 7) % 5 - 2));
  for (double v : {0.7, 1.0, 1.5, 1.9}) jump.push_back(v);
  for (int i = 0; i < 25; ++i) jump.push_back(2.0 + 0.02 * ((i * 3) % 5 - 2));
  EXPECT_LT(ramp_start(jump, 11), 28u);  // the hinge's early start this model corrects
  EXPECT_GE(ramp_start_levelling(jump, 11), 30u);  // the jump's first point (0.7) or the next
  EXPECT_LE(ramp_start_levelling(jump, 11), 31u);
  std::vector<double> ramp = {1, 1, 1, 1, 1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ramp_start_levelling(ramp), 5u);
  std::vector<double> step = {0, 0, 0, 0, 0, 9, 9, 9, 9};
  EXPECT_EQ(ramp_start_levelling(step), 5u);
  std::vector<double> from_start = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ramp_start_levelling(from_start), 0u);
  EXPECT_EQ(ramp_start_levelling(std::vector<double>{1, 2}), 0u);
}

TEST(ChangePoint, MeanShiftStartSplitsTwoLevels) {
  std::vector<double> x = {0, 0.1, -0.1, 0, 5, 5.1, 4.9, 5};
  EXPECT_EQ(mean_shift_start(x), 4u);
  EXPECT_EQ(mean_shift_start(std::vector<double>{1.0}), 0u);
}

// A KL that climbs steeply from zero and levels off, on a log scale, with and without a step at index 15.
std::vector<double> log_kl_rise(bool with_step) {
  std::vector<double> x;
  for (int i = 0; i < 40; ++i) {
    double kl = 0.03 * (1 - std::exp(-(i + 1) / 6.0)) * (with_step && i >= 15 ? 1.8 : 1.0);
    x.push_back(std::log(kl) + 0.05 * std::sin(i * 2.3));
  }
  return x;
}

TEST(ChangePoint, LargestJumpTellsAStepFromACurveThatLevelsOff) {
  Jump step = largest_jump(log_kl_rise(true), 5, 5, 10, 0.02);
  EXPECT_EQ(step.index, 15u);
  EXPECT_GT(step.z, 8);
  EXPECT_NEAR(step.gap, std::log(1.8), 0.15);
  EXPECT_NEAR(step.held, std::log(1.8), 0.2);
  // In noise sigmas the same gap is smaller than in standard errors: two lines' ends are known better than one point.
  EXPECT_GT(step.sigmas, 5);
  EXPECT_LT(step.sigmas, step.z);
  // The curve alone: its steep start is followed by the line before each split, so no gap is wide.
  EXPECT_LT(largest_jump(log_kl_rise(false), 5, 5, 10, 0.02).z, 4);
  // One wild point pulls the right line's start up, but not the median of the points from it on.
  std::vector<double> wild(30, 0.0);
  for (size_t i = 0; i < wild.size(); ++i) wild[i] = 0.05 * std::sin(static_cast<double>(i) * 2.3);
  wild[14] = 2.0;
  Jump spike = largest_jump(wild, 5, 5, 10, 0.02);
  EXPECT_LT(spike.held, 0.2);
  EXPECT_DOUBLE_EQ(largest_jump(std::vector<double>(9, 1.0), 5, 5, 10, 0.02).z, 0.0);  // too short to split
}

TEST(Trend, MannKendallMatchesScipyKendallTau) {
  // Strictly increasing n = 10: S = 45, var = 10*9*25/18 = 125, Z = (45 - 1) / sqrt(125) = 3.9355.
  std::vector<double> up = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  MannKendall r = mann_kendall(up);
  EXPECT_DOUBLE_EQ(r.s, 45.0);
  EXPECT_DOUBLE_EQ(r.variance, 125.0);
  EXPECT_NEAR(r.z, 3.93548, 1e-5);
  // Ties shrink the variance: {1, 1, 2}: S = 2, var = (3*2*11 - 2*1*9) / 18 = 2.6667.
  std::vector<double> tied = {1, 1, 2};
  r = mann_kendall(tied);
  EXPECT_DOUBLE_EQ(r.s, 2.0);
  EXPECT_NEAR(r.variance, 48.0 / 18.0, 1e-12);
  std::vector<double> flat = {2, 2, 2, 2};
  EXPECT_DOUBLE_EQ(mann_kendall(flat).z, 0.0);
}

TEST(Trend, ThinnedSeriesStaysBoundedAndKeepsTheShape) {
  ThinnedSeries s(16);
  for (int i = 0; i < 1000; ++i) s.push(i, static_cast<double>(i));
  EXPECT_LE(s.values().size(), 16u);
  EXPECT_GE(s.values().size(), 8u);
  EXPECT_EQ(s.raw_points(), 1000u);
  EXPECT_EQ(s.steps().front(), 0);
  for (size_t i = 1; i < s.values().size(); ++i) EXPECT_GT(s.values()[i], s.values()[i - 1]);
  // Each kept point is the mean of the raw points it stands for.
  EXPECT_DOUBLE_EQ(s.values().front(), (s.steps()[1] - 1) / 2.0);
}

}  // namespace
}  // namespace rldk::stats
