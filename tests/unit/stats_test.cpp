// src/core/stats: the one home of robust statistics, change points and trend tests. Reference values are computed
// by hand or with NumPy/SciPy (numbers in the comments).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/change_point.h"
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

TEST(ChangePoint, MeanShiftStartSplitsTwoLevels) {
  std::vector<double> x = {0, 0.1, -0.1, 0, 5, 5.1, 4.9, 5};
  EXPECT_EQ(mean_shift_start(x), 4u);
  EXPECT_EQ(mean_shift_start(std::vector<double>{1.0}), 0u);
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
