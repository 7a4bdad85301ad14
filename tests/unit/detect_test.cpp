// Detector catalog and kinds: every built-in detector replayed on its own test values (the fires ones must give a
// finding of its fault type, the quiet ones none), the streaming primitives' numerics, episodes and templates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "detect/kinds.h"
#include "detect/streaming.h"
#include "rldk/scan.h"

namespace rldk {
namespace {

// Adds one metric's points to a run (one segment).
void add_metric(rldk::Run& run, const std::string& name, const std::vector<int64_t>& steps,
                const std::vector<double>& values) {
  Series& s = run.series[name];
  s.name = name;
  s.steps = steps;
  s.values = values;
  s.wall_times.assign(steps.size(), NAN);
  s.segments.assign(steps.size(), 0);
}

// One metric's points as a run (one segment), and a scan of that run by one catalog detector alone.
rldk::Run one_metric_run(const std::string& name, const std::vector<int64_t>& steps, const std::vector<double>& values) {
  rldk::Run run;
  add_metric(run, name, steps, values);
  return run;
}

// Steps 1..n, as a run logged at every step has them.
std::vector<int64_t> steps_from_1(int n) {
  std::vector<int64_t> steps;
  for (int i = 0; i < n; ++i) steps.push_back(i + 1);
  return steps;
}

// n values at level(i) with multiplicative noise (5 % log-normal), the way KL and gradient norms scatter.
std::vector<double> noisy_levels(int n, uint64_t seed, const std::function<double(int)>& level) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<double> values;
  for (int i = 0; i < n; ++i) values.push_back(level(i) * std::exp(noise(rng)));
  return values;
}

std::vector<Finding> scan_with(const DetectorSpec& spec, const rldk::Run& run) {
  DetectorCatalog one;
  one.detectors.push_back(spec);
  ScanOptions options;
  options.catalog = &one;
  return scan_run(run, options).findings;
}

// A proxy reward that rose and levelled off, with an eval reward wandering on its plateau (a clean synthetic PPO
// run logged every 10 steps, evals every 50), is not hacking: the proxy's level is its mean over the evals'
// stretch, so it stops "rising" when the proxy stops. An exponentially weighted proxy lagged 200 steps behind and
// read the eval's wander as a critical reward_hacking_gold. A run with five evals, whose second eval was the
// highest, is not judged from that single eval either. A proxy still climbing while the evals fall is hacking.
TEST(HeldoutDeclineKind, AProxyThatLevelledOffIsNotHacking) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_hacking_gold");
  ASSERT_NE(spec, nullptr);
  auto run_of = [](const std::vector<double>& proxy, const std::vector<double>& evals, int every, int eval_every) {
    rldk::Run run = one_metric_run("reward/mean", {}, {});
    Series& p = run.series["reward/mean"];
    Series& e = run.series["eval/reward/mean"];
    e.name = "eval/reward/mean";
    for (size_t i = 0; i < proxy.size(); ++i) {
      int64_t step = static_cast<int64_t>(i + 1) * every;
      p.steps.push_back(step);
      p.values.push_back(proxy[i]);
      if (step % eval_every == 0 && static_cast<size_t>(step / eval_every) <= evals.size()) {
        e.steps.push_back(step);
        e.values.push_back(evals[step / eval_every - 1]);
      }
    }
    for (Series* s : {&p, &e}) {
      s->wall_times.assign(s->steps.size(), NAN);
      s->segments.assign(s->steps.size(), 0);
    }
    return run;
  };
  std::vector<double> proxy;  // -0.27 -> 1.35 over 400 steps, then 1.35 +- 0.05
  for (int i = 0; i < 100; ++i)
    proxy.push_back((i < 40 ? -0.27 + 1.62 * i / 40.0 : 1.35) + 0.05 * std::sin(i * 1.9));
  std::vector<double> plateau = {-0.179, -0.068, 0.050, 0.199, 0.163, 0.177, 0.264, 0.342, 0.444, 0.401,
                                 0.293,  0.329,  0.351, 0.344, 0.324, 0.311, 0.342, 0.419, 0.440, 0.364};
  EXPECT_TRUE(scan_with(*spec, run_of(proxy, plateau, 10, 50)).empty());

  std::vector<double> settled;  // 0.37 -> 0.62 over 150 steps, then 0.62 +- 0.02, logged every 5 steps
  for (int i = 0; i < 100; ++i) settled.push_back((i < 30 ? 0.37 + 0.25 * i / 30.0 : 0.62) + 0.02 * std::sin(i * 2.3));
  EXPECT_TRUE(scan_with(*spec, run_of(settled, {0.35, 0.483, 0.459, 0.449, 0.437}, 5, 100)).empty());

  std::vector<double> climbing;  // keeps climbing 0.2 -> 1.2 while the evals fall after their 8th
  std::vector<double> falling;
  for (int i = 0; i < 100; ++i) climbing.push_back(0.2 + 0.01 * i + 0.03 * std::sin(i * 1.9));
  for (int j = 0; j < 20; ++j) falling.push_back((j < 8 ? 0.1 + 0.04 * j : 0.38 - 0.03 * (j - 8)) + 0.005 * std::sin(j * 2.1));
  auto found = scan_with(*spec, run_of(climbing, falling, 10, 50));
  ASSERT_FALSE(found.empty());
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 500, 100);
}

// A run none of whose metrics rldk knows is judged on its non-finite values alone, and the scan says so; a run with
// one known metric is judged and gets no such note.
TEST(RunScan, SaysWhenNoDetectorCouldJudgeTheRun) {
  std::vector<int64_t> steps = {1, 2, 3, 4, 5};
  auto unknown = scan_run(one_metric_run("nnodes", steps, {1, 1, 1, 1, 1}));
  ASSERT_EQ(unknown.notes.size(), 1u);
  EXPECT_NE(unknown.notes[0].find("No detector could judge this run"), std::string::npos) << unknown.notes[0];
  EXPECT_NE(unknown.notes[0].find("nnodes"), std::string::npos) << unknown.notes[0];
  auto known = scan_run(one_metric_run("policy/kl", steps, {0.01, 0.02, 0.02, 0.03, 0.03}));
  EXPECT_TRUE(known.notes.empty());
  ScanOptions only_kl;
  only_kl.only = {"kl"};  // the person chose the detectors: those left out could have judged the run
  EXPECT_TRUE(scan_run(one_metric_run("reward/mean", steps, {0.1, 0.2, 0.3, 0.4, 0.5}), only_kl).notes.empty());
}

// A reward that fell to its lowest level and sat there to the end, on a negative scale where a drawdown from |best|
// is ill-defined (a real verl run: -0.68 at step 1, the floor score -1 from step 11 on); a reward that saturates at
// its top, or one that sits low from the first step without falling, is not at a floor it fell to.
TEST(FloorKind, RewardFallenToItsFloorAndStayed) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_at_floor");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> collapsed, saturated, low_from_start;
  for (int i = 0; i < 60; ++i) {
    steps.push_back(i + 1);
    collapsed.push_back(i < 10 ? -0.68 - 0.03 * i : -1.0);
    saturated.push_back(i < 10 ? 0.1 * i : 0.99);
    low_from_start.push_back(i == 5 || i == 12 ? 0.0 : -1.0);  // two lucky batches, then 47 points at -1
  }
  auto found = scan_with(*spec, one_metric_run("reward/mean", steps, collapsed));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 11);
  EXPECT_EQ(found[0].end_step, 60);
  EXPECT_TRUE(scan_with(*spec, one_metric_run("reward/mean", steps, saturated)).empty());
  EXPECT_TRUE(scan_with(*spec, one_metric_run("reward/mean", steps, low_from_start)).empty());
  // Values near the largest double: the level before is a median, not a sum that overflows.
  std::vector<double> huge = collapsed;
  for (int i = 0; i < 10; ++i) huge[i] = 1e308;
  auto from_huge = scan_with(*spec, one_metric_run("reward/mean", steps, huge));
  ASSERT_EQ(from_huge.size(), 1u);
  EXPECT_EQ(from_huge[0].evidence.at("before"), 1e308);
}

// A KL drift is judged by the level it moved to: a move from 0.04 to 0.12 nats with one batch at 2.6 inside it
// stayed in the healthy band (below 0.3), so it is a note; the batch is kl_spike's to report.
TEST(RunScan, AShiftInsideTheHealthyRangeIsANoteWhateverOneBatchDid) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_drift");
  ASSERT_NE(spec, nullptr);
  std::vector<double> kl = noisy_levels(300, 3, [](int i) { return i < 150 ? 0.04 : 0.12; });
  kl[220] = 2.6;
  auto found = scan_with(*spec, one_metric_run("policy/kl", steps_from_1(300), kl));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].peak_value, 2.6);
  EXPECT_EQ(found[0].severity, Severity::info) << found[0].explanation;
  EXPECT_NE(found[0].explanation.find("stayed inside the healthy range"), std::string::npos) << found[0].explanation;
}

// A KL spike that came back inside the healthy range is one batch, a note; one still under way when the data ends
// has not come back to anything yet: it does not say it came back, and it is eased only when its peak stayed inside
// the range.
TEST(RunScan, ASpikeSaysWhetherItCameBack) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_spike");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps = steps_from_1(80);
  std::vector<double> kl = noisy_levels(80, 5, [](int) { return 0.05; });
  std::vector<double> back = kl, at_end = kl;
  back[60] = 0.9;
  at_end[78] = at_end[79] = 0.9;
  auto came_back = scan_with(*spec, one_metric_run("policy/kl", steps, back));
  ASSERT_EQ(came_back.size(), 1u);
  EXPECT_EQ(came_back[0].severity, Severity::info) << came_back[0].explanation;
  EXPECT_NE(came_back[0].explanation.find("Then it came back."), std::string::npos) << came_back[0].explanation;
  auto open = scan_with(*spec, one_metric_run("policy/kl", steps, at_end));
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].severity, Severity::warning) << open[0].explanation;
  EXPECT_NE(open[0].explanation.find("had not come back when the data ended"), std::string::npos)
      << open[0].explanation;
  EXPECT_EQ(open[0].explanation.find("came back inside"), std::string::npos) << open[0].explanation;
  // Still under way but inside the band at its peak (0.05 -> 0.25 nats): a note, judged by that peak.
  std::vector<double> low_at_end = kl;
  low_at_end[78] = low_at_end[79] = 0.25;
  auto low = scan_with(*spec, one_metric_run("policy/kl", steps, low_at_end));
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].severity, Severity::info) << low[0].explanation;
  EXPECT_NE(low[0].explanation.find("stayed inside the healthy range"), std::string::npos) << low[0].explanation;
}

// A clipped fraction that climbs from 0.2 % is judged against the detector's own warning level (30 % cut), not the
// metric's range (40 %): a climb to 35 % is a warning, one to 18 % (a batch at 27 % at most) a note, and a share that
// held at 25 % from the start no climb at all.
TEST(RunScan, AClimbIsJudgedByItsEndAgainstTheDetectorsOwnLevel) {
  const DetectorSpec* spec = builtin_detector_catalog().find("truncation_rising");
  ASSERT_NE(spec, nullptr);
  const int n = 100;
  auto climb_to = [&](double end) {
    return noisy_levels(n, 11, [&](int i) {
      return i < 30 ? 0.002 : 0.002 + (end - 0.002) * std::min(1.0, (i - 30) / 50.0);
    });
  };
  auto high = scan_with(*spec, one_metric_run("response/clipped_frac", steps_from_1(n), climb_to(0.35)));
  ASSERT_EQ(high.size(), 1u);
  EXPECT_EQ(high[0].severity, Severity::warning) << high[0].explanation;
  EXPECT_NEAR(static_cast<double>(high[0].onset_step), 31, 5);
  std::vector<double> low = climb_to(0.18);
  low[85] = 0.27;
  auto eased = scan_with(*spec, one_metric_run("response/clipped_frac", steps_from_1(n), low));
  ASSERT_EQ(eased.size(), 1u);
  EXPECT_EQ(eased[0].severity, Severity::info) << eased[0].explanation;
  EXPECT_NE(eased[0].explanation.find("below 0.3"), std::string::npos) << eased[0].explanation;
  std::vector<double> held = noisy_levels(n, 12, [](int) { return 0.25; });
  EXPECT_TRUE(scan_with(*spec, one_metric_run("response/clipped_frac", steps_from_1(n), held)).empty());
}

// A run of 20 logged points is too short for the streaming flat test (50 reference points, a 50-point window), yet a
// policy loss that flatlined at its 12th point is plain when the run is seen whole: dated at the first flat point. A
// run that stays noisy, or one flat from its first point, is not a plateau.
TEST(FlatKind, AShortRunSeenWholeShowsWhereTheLossFlatlined) {
  const DetectorSpec* spec = builtin_detector_catalog().find("loss_plateau");
  ASSERT_NE(spec, nullptr);
  const int n = 20;
  std::vector<int64_t> steps;
  for (int i = 0; i < n; ++i) steps.push_back(10 * (i + 1));
  std::vector<double> noisy = noisy_levels(n, 21, [](int) { return 0.5; });
  std::vector<double> flatlined = noisy;
  for (int i = 11; i < n; ++i) flatlined[i] = 0.4312;
  auto found = scan_with(*spec, one_metric_run("policy/loss", steps, flatlined));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 120);
  EXPECT_EQ(found[0].end_step, 200);
  EXPECT_EQ(found[0].evidence.at("hindsight"), 1);
  EXPECT_EQ(found[0].evidence.at("window_stddev"), 0);
  EXPECT_TRUE(scan_with(*spec, one_metric_run("policy/loss", steps, noisy)).empty());
  std::vector<double> constant(n, 0.0);
  EXPECT_TRUE(scan_with(*spec, one_metric_run("policy/loss", steps, constant)).empty());
}

// A mean length pinned at its largest value says every completion was cut, unless the run logs how many were cut:
// answers that settled at exactly 20 tokens under a cap of 128, with a clipped fraction of 0, were not.
TEST(CeilingKind, DefersToALoggedClippedFraction) {
  const DetectorSpec* spec = builtin_detector_catalog().find("length_pinned_at_max");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> length, clipped;
  for (int i = 0; i < 40; ++i) {
    steps.push_back(i + 1);
    length.push_back(i < 10 ? 15.0 + i * 0.5 : 20.0);
    clipped.push_back(0.0);
  }
  rldk::Run unlogged = one_metric_run("response/length_mean", steps, length);
  EXPECT_EQ(scan_with(*spec, unlogged).size(), 1u);
  rldk::Run logged = unlogged;
  add_metric(logged, "response/clipped_frac", steps, clipped);
  EXPECT_TRUE(scan_with(*spec, logged).empty());
}

// A run cut at its cap from the first step is pinned there from its fifth logged point: the alarm (what a live
// monitor is told) comes then, not at the end of the data, and a larger value later is another ceiling.
TEST(CeilingKind, AlarmsOnceThePointsSoFarArePinned) {
  const DetectorSpec* spec = builtin_detector_catalog().find("length_pinned_at_max");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> length;
  for (int i = 0; i < 40; ++i) {
    steps.push_back(10 * (i + 1));
    length.push_back(i % 4 == 3 ? 180.0 - i : 200.0);  // most steps at the cap of 200
  }
  auto findings = scan_with(*spec, one_metric_run("response/length_mean", steps, length));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].onset_step, 10);
  // Points 1, 2, 3, 5, 6: the fifth at the cap is the sixth point, step 60.
  EXPECT_EQ(findings[0].evidence.at("alarm_step"), 60.0);
  auto detector = detect::make_detector(*spec);
  detector->metric_names = {"response/length_mean"};
  detector->reset();
  for (size_t i = 0; i < steps.size(); ++i) {
    double x[2] = {i == 20 ? 250.0 : length[i], NAN};
    detector->observe(steps[i], x);
  }
  // Alarmed at step 60 for the ceiling of 200; the value of 250 at step 210 starts another, which never holds.
  ASSERT_EQ(detector->alarms().size(), 1u);
  EXPECT_EQ(detector->alarms()[0], 60);
  detector->finish();
  EXPECT_TRUE(detector->findings().empty());
}

// A DPO loss at ln 2 for a whole run (single batches swinging around it) never learned; a run that logs its
// accuracy is judged by it instead (at beta 0.05 a healthy run's loss stays near ln 2 while its accuracy climbs).
TEST(AtLevelKind, ALossAtLn2ForTheWholeRunUnlessTheAccuracyIsLogged) {
  const DetectorSpec* spec = builtin_detector_catalog().find("preference_loss_at_chance");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> loss, accuracy;
  for (int i = 0; i < 100; ++i) {
    steps.push_back(10 * (i + 1));
    loss.push_back(0.6931 + (i % 2 == 0 ? 0.03 : -0.035));
    accuracy.push_back(0.5 + 0.004 * i);
  }
  auto found = scan_with(*spec, one_metric_run("train/loss", steps, loss));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 10);
  EXPECT_EQ(found[0].end_step, 1000);
  rldk::Run with_accuracy = one_metric_run("train/loss", steps, loss);
  add_metric(with_accuracy, "pref/reward_accuracy", steps, accuracy);
  EXPECT_TRUE(scan_with(*spec, with_accuracy).empty());
  // A loss that leaves ln 2 in its last tenth learned.
  for (int i = 90; i < 100; ++i) loss[i] = 0.64;
  EXPECT_TRUE(scan_with(*spec, one_metric_run("train/loss", steps, loss)).empty());
}

// Two detectors that see one entropy collapse are one finding; when one of them eased it because the reward rose
// over the run, the episode is reported at that severity, and the text says why (never "a note rather than a
// warning" on a warning).
TEST(RunScan, OneFailureSeenTwiceKeepsTheEasing) {
  rldk::Run run;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (const char* name : {"policy/entropy", "reward/mean"}) {
    Series& s = run.series[name];
    s.name = name;
    for (int i = 0; i < 400; ++i) {
      double t = i / 400.0;
      s.steps.push_back(i);
      s.values.push_back(std::string(name) == "reward/mean" ? 0.3 + 0.3 * t + 0.01 * noise(rng)
                                                            : (t < 0.5 ? 1.2 + 0.02 * noise(rng) : 0.01));
      s.wall_times.push_back(NAN);
      s.segments.push_back(0);
    }
  }
  std::vector<Finding> entropy;
  for (const Finding& f : scan_run(run).findings) {
    if (f.fault == "entropy_collapse") entropy.push_back(f);
  }
  ASSERT_EQ(entropy.size(), 1u);
  EXPECT_EQ(entropy[0].severity, Severity::warning) << entropy[0].explanation;
  EXPECT_NE(entropy[0].explanation.find("learned all the same, so this is a warning"), std::string::npos)
      << entropy[0].explanation;
}

// A gradient norm back at its usual level after a run of exact zeros (steps whose groups all scored alike) did not
// explode: on a log scale zero is no level for a rise to be measured from.
TEST(LevelShiftKind, NoRiseMeasuredFromZeros) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_explosion");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> norm;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> usual(0.06, 0.9);
  for (int i = 0; i < 300; ++i) {
    steps.push_back(i + 1);
    norm.push_back(i < 40 || (i >= 120 && i < 200) ? 0.0 : usual(rng));
  }
  EXPECT_TRUE(scan_with(*spec, one_metric_run("policy/grad_norm", steps, norm)).empty());
}

// A trend-following forecast that a slope carried away from the change is no level the metric had: a change is
// measured from the level just before it. A real TRL GRPO run logged every 5 steps: entropy rose through the
// warm-up (0.158 to 0.44), dipped for two points and ended where it began; the forecast had run on to 0.62, and the
// dip read as a critical collapse "from 0.6231", a level the series never reached.
TEST(LevelShiftKind, ChangeMeasuredFromALevelTheMetricHad) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_collapse");
  ASSERT_NE(spec, nullptr);
  const std::vector<double> entropy = {0.158, 0.165, 0.208, 0.158, 0.222, 0.247, 0.291, 0.229, 0.152, 0.183,
                                       0.205, 0.17,  0.202, 0.155, 0.0956, 0.134, 0.299, 0.358, 0.388, 0.44,
                                       0.192, 0.07,  0.139, 0.119, 0.222, 0.154, 0.227, 0.259, 0.187, 0.526,
                                       0.412, 0.496, 0.283, 0.227, 0.244, 0.137, 0.154, 0.134, 0.159, 0.158};
  std::vector<int64_t> steps;
  for (size_t i = 0; i < entropy.size(); ++i) steps.push_back(5 * static_cast<int64_t>(i + 1));
  auto found = scan_with(*spec, one_metric_run("policy/entropy", steps, entropy));
  double highest = *std::max_element(entropy.begin(), entropy.end());
  for (const Finding& f : found) EXPECT_LE(f.evidence.at("baseline"), highest) << f.explanation;
  EXPECT_TRUE(found.empty());
}

// An excursion beyond a bound is dated no later than its first point beyond it, even when the take-off inside it
// comes a point later (a real TRL GRPO run, its KL per step: 0.37 nats at step 70, then 17.8): the text's steps
// and its count of points agree.
TEST(BoundKind, OnsetNoLaterThanTheFirstPointBeyond) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(spec, nullptr);
  std::vector<double> kl = {
      0, 0, 0.0002201, 0.0005686, 0.005881, 0.008355, 0.01278, 0.02798, 0.03951, 0.04138, 0.06203, 0.07157, 0.126,
      0.1514, 0.1008, 0.1769, 0.1122, 0.1304, 0.1218, 0.1074, 0.1694, 0.1007, 0.12, 0.1124, 0.1292, 0.1041, 0.1134,
      0.09882, 0.08229, 0.101, 0.1075, 0.107, 0.116, 0.1086, 0.09039, 0.1193, 0.3042, 0.1271, 0.1115, 0.08731,
      0.1147, 0.1102, 0.1339, 0.1594, 0.1494, 0.1557, 0.1643, 0.1265, 0.4965, 0.1419, 0.1222, 0.1953, 0.146, 0.1445,
      0.126, 0.1105, 0.1537, 0.1376, 0.2019, 0.1255, 0.1237, 0.1092, 0.1894, 0.09937, 0.1518, 0.1157, 0.1402, 0.1161,
      0.1622, 0.3719, 17.76, 0.1295, 0.1034, 0.1032, 0.1056, 0.1327, 0.08952, 0.1193, 0.08703, 0.1112};
  // As logged (a healthy Qwen3.5-9B GRPO run), one point above 1 nat is no episode.
  auto found = scan_with(*spec, one_metric_run("policy/kl", steps_from_1(static_cast<int>(kl.size())), kl));
  EXPECT_TRUE(found.empty());
  // With a second one after it, the critical episode begins at 0.3719, the first point of the move.
  kl[71] = 12.0;
  found = scan_with(*spec, one_metric_run("policy/kl", steps_from_1(static_cast<int>(kl.size())), kl));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 70);
  EXPECT_EQ(found[0].end_step, 72);
}

// A KL beyond its band from the run's first logged points is a setup problem (the reference is not the policy's
// starting point), and the finding says so; one that leaves the band later does not get that sentence.
// A bound's onset dates where the move began, before the first point beyond the bound; the text counts the points
// beyond it from that first point and says where the move began (a verl PPO run's KL rose from 0.26 at step 188 and
// first passed 0.3 at step 250: it was not "above 0.3 from step 188").
TEST(BoundKind, CountsThePointsBeyondFromTheFirstOfThem) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(spec, nullptr);
  std::vector<double> kl;
  for (int i = 0; i < 120; ++i) {
    double level = i < 40 ? 0.1 : i < 70 ? 0.1 + 0.25 * (i - 40) / 30.0 : 0.36;
    kl.push_back(level * (1 + 0.02 * std::sin(i * 1.7)));
  }
  auto found = scan_with(*spec, one_metric_run("policy/kl", steps_from_1(static_cast<int>(kl.size())), kl));
  ASSERT_EQ(found.size(), 1u);
  auto beyond = static_cast<int64_t>(found[0].evidence.at("beyond_step"));
  EXPECT_LT(found[0].onset_step, beyond);
  EXPECT_GT(kl[static_cast<size_t>(beyond - 1)], 0.3);
  EXPECT_LE(kl[static_cast<size_t>(beyond - 2)], 0.3);
  EXPECT_NE(found[0].explanation.find("from step " + std::to_string(beyond) + " through"), std::string::npos);
  EXPECT_NE(found[0].explanation.find("Its move there began at step " + std::to_string(found[0].onset_step) + "."),
            std::string::npos);
}

TEST(BoundKind, SaysWhenTheRunStartedBeyondTheBound) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> from_start, later;
  for (int i = 0; i < 40; ++i) {
    steps.push_back(i + 1);
    from_start.push_back(1.1 + 0.01 * (i % 3));
    later.push_back(i < 20 ? 0.05 : 1.1);
  }
  auto started = scan_with(*spec, one_metric_run("policy/kl", steps, from_start));
  ASSERT_EQ(started.size(), 1u);
  EXPECT_NE(started[0].explanation.find("from the run's first logged points"), std::string::npos) << started[0].explanation;
  auto left = scan_with(*spec, one_metric_run("policy/kl", steps, later));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].explanation.find("from the run's first logged points"), std::string::npos) << left[0].explanation;
}

TEST(DetectorCatalog, BuiltinParsesAndCoversEveryFaultType) {
  const DetectorCatalog& catalog = builtin_detector_catalog();
  ASSERT_FALSE(catalog.detectors.empty());
  for (const auto& fault : fault_types()) {
    bool covered = false;
    for (const auto& d : catalog.detectors) covered = covered || d.fault == fault;
    EXPECT_TRUE(covered) << "no detector for fault type " << fault;
  }
}

class CatalogReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogReplay, FiresOnItsFiringValuesAndStaysQuietOnItsQuietValues) {
  const DetectorSpec* spec = builtin_detector_catalog().find(GetParam());
  ASSERT_NE(spec, nullptr);
  ASSERT_FALSE(spec->test_fires.empty()) << spec->origin;
  ASSERT_FALSE(spec->test_quiet.empty()) << spec->origin;
  auto fired = run_detector_on_values(*spec, spec->test_fires);
  ASSERT_FALSE(fired.empty()) << spec->id << " (" << spec->origin << ") did not fire on its firing values";
  for (const auto& f : fired) {
    EXPECT_EQ(f.fault, spec->fault);
    EXPECT_LE(f.onset_step, f.end_step);
    EXPECT_EQ(f.explanation.find('{'), std::string::npos) << "unfilled template field: " << f.explanation;
  }
  auto quiet = run_detector_on_values(*spec, spec->test_quiet);
  EXPECT_TRUE(quiet.empty()) << spec->id << " (" << spec->origin << ") fired on its quiet values at step "
                             << (quiet.empty() ? 0 : quiet.front().onset_step) << ": "
                             << (quiet.empty() ? "" : quiet.front().explanation);
}

std::vector<std::string> catalog_ids() {
  std::vector<std::string> ids;
  for (const auto& d : builtin_detector_catalog().detectors) ids.push_back(d.id);
  return ids;
}

INSTANTIATE_TEST_SUITE_P(Builtin, CatalogReplay, ::testing::ValuesIn(catalog_ids()),
                         [](const auto& info) { return info.param; });

TEST(DetectorCatalog, ErrorsCarryFileLineAndName) {
  const char* bad_param = R"(detectors:
  - id: x
    fault: kl_spike
    area: kl
    severity: warning
    kind: spike
    title: t
    metric: policy/kl
    params: {warmup: 30, thresold: 5}
    explanation: e
    fixes: [f]
    test: {fires: {policy/kl: [1]}, quiet: {policy/kl: [1]}}
)";
  auto r = parse_detector_catalog(bad_param, "mine.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("thresold"), std::string::npos);
  EXPECT_EQ(r.error().context.rfind("mine.yaml:9:", 0), 0u) << r.error().context;

  auto unknown_fault = parse_detector_catalog(
      "detectors:\n  - {id: y, fault: kl_wobble, area: kl, severity: info, kind: spike, title: t, explanation: e}\n",
      "f.yaml");
  ASSERT_FALSE(unknown_fault.ok());
  EXPECT_NE(unknown_fault.error().message.find("kl_wobble"), std::string::npos);

  // An input may be a training setting (setting.<name>), if data/metrics.yaml knows it, and never the first one.
  auto setting_input = [](const std::string& inputs) {
    return parse_detector_catalog(
        "detectors:\n  - {id: z, fault: truncation, area: data, severity: warning, kind: threshold, title: t,\n"
        "     inputs: " + inputs + ",\n"
        "     when: [{input: a, above: 0.5}], params: {min_points: 1, max_gap: 0}, explanation: e, fixes: [f],\n"
        "     test: {fires: {response/length_mean: [1]}, quiet: {response/length_mean: [0]}}}\n",
        "s.yaml");
  };
  EXPECT_TRUE(setting_input("{a: [response/length_mean], b: [setting.max_completion_length]}").ok());
  auto unknown_setting = setting_input("{a: [response/length_mean], b: [setting.max_len]}");
  ASSERT_FALSE(unknown_setting.ok());
  EXPECT_NE(unknown_setting.error().message.find("unknown setting 'max_len'"), std::string::npos);
  EXPECT_FALSE(setting_input("{a: [setting.max_completion_length]}").ok());

  // `levels` needs a warning level, on any kind: a bound watches it, another kind's finding is a warning only beyond
  // it.
  auto with_levels = [](const std::string& levels) {
    return parse_detector_catalog(
        "detectors:\n  - {id: w, fault: truncation, area: data, severity: warning, kind: steady_trend, title: t,\n"
        "     metric: [response/clipped_frac], direction: up, levels: " + levels + ",\n"
        "     params: {min_points: 20, min_z: 4, min_relative_change: 2, min_scale: 0.05, edge_fraction: 0.2,\n"
        "              capacity: 512, min_late_share: 0, min_end: 0}, explanation: e, fixes: [f],\n"
        "     test: {fires: {response/clipped_frac: [1]}, quiet: {response/clipped_frac: [0]}}}\n",
        "l.yaml");
  };
  auto steady = with_levels("{warning: 0.3}");
  ASSERT_TRUE(steady.ok()) << steady.error().message;
  EXPECT_EQ(steady->detectors.front().level_warning, 0.3);
  auto no_warning = with_levels("{critical: 0.9}");
  ASSERT_FALSE(no_warning.ok());
  EXPECT_NE(no_warning.error().message.find("levels must be {warning: <number>}"), std::string::npos);
}

TEST(Streaming, RingWindowHalvesAndPrecision) {
  detect::RingWindow w;
  w.configure(4);
  for (int i = 1; i <= 6; ++i) w.push(1e9 + i, i);  // holds 3, 4, 5, 6 (+1e9)
  ASSERT_TRUE(w.full());
  EXPECT_DOUBLE_EQ(w.mean(), 1e9 + 4.5);
  EXPECT_DOUBLE_EQ(w.older_mean(), 1e9 + 3.5);
  EXPECT_DOUBLE_EQ(w.newer_mean(), 1e9 + 5.5);
  EXPECT_NEAR(w.stddev(), std::sqrt(1.25), 1e-9);
  EXPECT_EQ(w.step_from_oldest(0), 3);
}

TEST(Streaming, MedianAndSigma) {
  std::vector<double> v = {1, 2, 3, 4, 100};
  double median = 0, sigma = 0;
  detect::median_and_sigma(v, median, sigma);
  EXPECT_DOUBLE_EQ(median, 3);
  EXPECT_DOUBLE_EQ(sigma, 1.4826);
}

// The KL controller detector: a coefficient that adapted and then froze through a KL shift is a stopped controller;
// one that was fixed for the whole run is a fixed penalty, and the same shift is not this detector's finding.
TEST(Scan, ControllerThatStoppedUpdatingIsFoundAFixedCoefficientIsNot) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_controller_off_target");
  ASSERT_NE(spec, nullptr);
  std::vector<double> kl, adapting_then_frozen, fixed;
  for (int i = 0; i < 400; ++i) {
    kl.push_back((i < 200 ? 0.05 : 0.2) * (1 + 0.05 * std::sin(i * 1.3)));
    adapting_then_frozen.push_back(i < 150 ? 0.1 * (1 + 0.001 * i) : 0.1 * 1.15);
    fixed.push_back(0.1);
  }
  auto frozen = run_detector_on_values(*spec, {{"policy/kl", kl}, {"policy/kl_coef", adapting_then_frozen}});
  ASSERT_EQ(frozen.size(), 1u);
  EXPECT_NEAR(static_cast<double>(frozen[0].onset_step), 201, 3);
  EXPECT_EQ(frozen[0].evidence.at("controller_frozen"), 1);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/kl", kl}, {"policy/kl_coef", fixed}}).empty());
}

// An entropy that turns and climbs 1.5x from its low is a rebound, but not when the whole climb is a few hundredths
// of a nat (a nearly deterministic policy wandering between 0.021 and 0.033 nats per token, as in a healthy verl
// PPO run printed with 3 decimals): the same shape ten times higher is one.
TEST(Scan, EntropyReboundNeedsARiseInNatsNotOnlyARatio) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_rebound");
  ASSERT_NE(spec, nullptr);
  std::vector<double> small, large;
  for (int i = 0; i < 200; ++i) {
    double level = i < 100 ? 0.035 - 0.014 * i / 100.0 : 0.021 + 0.012 * std::min(1.0, (i - 100) / 30.0);
    double v = std::round((level + 0.0015 * std::sin(i * 2.3)) * 1000) / 1000;  // printed with 3 decimals
    small.push_back(v);
    large.push_back(10 * v);
  }
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/entropy", small}}).empty());
  EXPECT_EQ(run_detector_on_values(*spec, {{"policy/entropy", large}}).size(), 1u);
}

// A log that ends during a climb (a 20-point run: entropy falls to 1.26, then rises to 3.45) is reported with the
// up points it had; a climb that held for fewer than 3 points when the log ended is not.
TEST(Scan, EntropyReboundUnderWayWhenTheLogEndsIsReported) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_rebound");
  ASSERT_NE(spec, nullptr);
  std::vector<double> entropy = {2.41, 2.21, 1.88, 1.68, 1.56, 1.30, 1.26, 1.30, 1.28, 1.39,
                                 1.48, 1.61, 1.74, 1.89, 2.12, 2.37, 2.73, 2.69, 3.10, 3.45};
  auto found = run_detector_on_values(*spec, {{"policy/entropy", entropy}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].end_step, 20);
  entropy.resize(18);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/entropy", entropy}}).empty());
}

// A sudden entropy rise before the level-shift warm-up is complete (a 20-point run, the surge at its 8th point) is
// found by the early rule, dated at the jump (step 9); the same run sliding up by a quarter over those points is not a surge.
TEST(Scan, EntropySurgeIsFoundBeforeTheWarmUpEnds) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_surge");
  ASSERT_NE(spec, nullptr);
  std::vector<double> surge, slide;
  for (int i = 0; i < 20; ++i) {
    double wiggle = 0.02 * std::sin(i * 1.7);
    surge.push_back((i < 8 ? 0.9 - 0.02 * i : 2.1) + wiggle);
    slide.push_back(0.9 * (1 + 0.25 * i / 19.0) + wiggle);
  }
  auto found = run_detector_on_values(*spec, {{"policy/entropy", surge}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 9);  // steps count from 1
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/entropy", slide}}).empty());
}

// Entropy falls steadily in most runs' first steps; a surge after that fall is judged against where the entropy
// now is, with the noise around its decline (not the spread of the decline itself, which hid a surge to 3.9 from
// 1.1 as a 3-sigma wobble): before the warm-up ends (point 30 of a 50-point warm-up) and after it (30 of 20).
TEST(Scan, EntropySurgeAfterASteadyFallIsFound) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_surge");
  ASSERT_NE(spec, nullptr);
  std::vector<double> entropy;
  for (int i = 0; i < 29; ++i) entropy.push_back(2.35 * std::exp(-0.027 * i) * (1 + 0.03 * std::sin(i * 1.7)));
  for (int i = 0; i < 7; ++i) entropy.push_back(3.9);
  for (int i = 0; i < 10; ++i) entropy.push_back(1.0);
  auto found = run_detector_on_values(*spec, {{"policy/entropy", entropy}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 30);
  DetectorSpec short_warmup = *spec;
  short_warmup.params["warmup"] = 20;
  found = run_detector_on_values(short_warmup, {{"policy/entropy", entropy}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 30);
}

// A rise judged against the start leaves out a first value an order of magnitude below the others: a GRPO step
// whose groups all scored alike (a gradient norm of 0.0003 among 0.3-0.5) does not make every later ordinary norm
// "1,000x its start"; a norm that does climb tenfold from an ordinary start is still found.
TEST(Scan, RiseAgainstTheStartIgnoresAnOddLowFirstValue) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_norm_above_start");
  ASSERT_NE(spec, nullptr);
  std::vector<double> no_signal_step = {0.53, 0.34, 0.0003}, exploding = {0.53, 0.34, 0.0003};
  for (int i = 0; i < 20; ++i) {
    double wiggle = 0.1 * std::sin(i * 1.3);
    no_signal_step.push_back(0.6 + wiggle);
    exploding.push_back(i < 8 ? 0.6 + wiggle : 8.0 + wiggle);
  }
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/grad_norm", no_signal_step}}).empty());
  EXPECT_EQ(run_detector_on_values(*spec, {{"policy/grad_norm", exploding}}).size(), 1u);
}

// The reward context sees a climb of a noisy per-step reward (4 completions a step: 0.1-1.0 from step to step)
// whose quarter medians go from about 0.2 to 0.65 (one severity lower); a run whose reward stays where it was keeps it.
TEST(Scan, ProgressIsJudgedOnQuarterMediansOfANoisyReward) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_norm_below_start");
  ASSERT_NE(spec, nullptr);
  std::vector<double> norm, climbing, flat;
  const double draws[] = {0.15, 0.55, 0.1, 0.35, 0.8, 0.2, 0.45, 0.05, 0.6, 0.3};
  for (int i = 0; i < 100; ++i) {
    norm.push_back(i < 40 ? 0.5 : 0.0005);
    double noise = draws[(i * 7) % 10] - 0.35;
    climbing.push_back(0.2 + 0.5 * i / 99.0 + noise);
    flat.push_back(0.3 + noise);
  }
  auto converging = run_detector_on_values(*spec, {{"policy/grad_norm", norm}, {"reward/mean", climbing}});
  auto stalled = run_detector_on_values(*spec, {{"policy/grad_norm", norm}, {"reward/mean", flat}});
  ASSERT_EQ(converging.size(), 1u);
  ASSERT_EQ(stalled.size(), 1u);
  EXPECT_EQ(converging[0].evidence.count("progress_level"), 1u);
  EXPECT_EQ(stalled[0].evidence.count("progress_level"), 0u);
  EXPECT_LT(static_cast<int>(converging[0].severity), static_cast<int>(stalled[0].severity));
}

// A GRPO gradient norm is 0 at most logged steps (zeros are skipped on a log scale); a spike that comes after only
// two nonzero norms is judged against them (a real TRL sweep run: 0.19, 0.21, zeros, then 3.6).
TEST(Scan, GradientSpikeAfterTwoNonzeroNorms) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_spike");
  ASSERT_NE(spec, nullptr);
  std::vector<double> norm = {0.19, 0.21, 0, 0, 0, 0, 3.6, 0, 0, 0, 0, 0.25, 0, 0.3};
  auto found = run_detector_on_values(*spec, {{"policy/grad_norm", norm}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 7);
}

// Truncation the run got over (the clipped fraction under its bound afterwards for three times as long as it was
// above) is one severity lower and says where it resolved; the same episode near the end of the run stays a warning.
TEST(Scan, TruncationTheRunGotOverIsOneSeverityLower) {
  const DetectorSpec* spec = builtin_detector_catalog().find("truncation");
  ASSERT_NE(spec, nullptr);
  std::vector<double> resolved, late;
  for (int i = 0; i < 80; ++i) {
    double wiggle = 0.02 * std::sin(i * 1.3);
    resolved.push_back((i < 15 ? 0.6 : 0.03) + wiggle);
    late.push_back((i < 60 ? 0.03 : 0.6) + wiggle);
  }
  auto early = run_detector_on_values(*spec, {{"response/clipped_frac", resolved}});
  auto ending = run_detector_on_values(*spec, {{"response/clipped_frac", late}});
  ASSERT_EQ(early.size(), 1u);
  ASSERT_EQ(ending.size(), 1u);
  EXPECT_EQ(early[0].severity, rldk::Severity::info);
  EXPECT_EQ(early[0].evidence.count("resolved_step"), 1u);
  EXPECT_EQ(ending[0].severity, rldk::Severity::warning);
}

// A reward logged every 4 steps beside an entropy logged at each is carried forward to the entropy's steps; its
// noise and its start are judged on its own logged values, each counted once. Counted at every entropy point, the
// repeats made its point-to-point noise 0, and a 0.56 -> 0.66 wander inside noise of 0.2 read as "the run learned",
// which eased a collapsing entropy to a note.
TEST(Scan, ProgressCountsAContextValueOnceWhereItWasLogged) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_below_start");
  ASSERT_NE(spec, nullptr);
  rldk::Run run = one_metric_run("policy/entropy", steps_from_1(120), {});
  Series& entropy = run.series["policy/entropy"];
  for (int i = 0; i < 120; ++i) entropy.values.push_back(0.4 * std::exp(-i / 25.0) + 0.02);
  std::vector<int64_t> every_fourth;
  std::vector<double> wandering;
  for (int i = 0; i < 30; ++i) {
    every_fourth.push_back(4 * (i + 1));
    wandering.push_back(0.5 + 0.2 * i / 29.0 + 0.15 * std::sin(i * 2.3));
  }
  rldk::Run reward = one_metric_run("reward/mean", every_fourth, wandering);
  run.series["reward/mean"] = reward.series["reward/mean"];
  DetectorCatalog one;
  one.detectors.push_back(*spec);
  ScanOptions options;
  options.catalog = &one;
  auto found = scan_run(run, options).findings;
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::warning) << found[0].explanation;
}

// A reward that climbed to its top inside the run's first quarter (a tiny TRL GRPO run: 0.11 -> 0.98 in 7 of 50
// logged points, then 1.0) rose over the run: its first quarter's median is near the top, so the start is also
// judged on the first 5 points. Its spread then vanished: saturation, a note; the same spread gone with a reward
// that stayed at 0.11 is a warning.
TEST(Scan, ProgressSeesARewardThatRoseInsideTheFirstQuarter) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_spread_collapse");
  ASSERT_NE(spec, nullptr);
  std::vector<double> reward = {0.11, 0.114, 0.18, 0.282, 0.629, 0.867, 0.984, 0.995, 0.997};
  std::vector<double> spread = {0.166, 0.12, 0.139, 0.147, 0.133, 0.113, 0.0196, 0.011, 0.00877};
  std::vector<double> flat(9, 0.11);
  for (int i = 0; i < 41; ++i) {
    reward.push_back(1.0);
    flat.push_back(0.11 + 0.002 * (i % 3));
    spread.push_back(0.0);
  }
  auto saturated = run_detector_on_values(*spec, {{"reward/std", spread}, {"reward/mean", reward}});
  auto stuck = run_detector_on_values(*spec, {{"reward/std", spread}, {"reward/mean", flat}});
  ASSERT_EQ(saturated.size(), 1u);
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_EQ(saturated[0].severity, Severity::info);
  EXPECT_NEAR(saturated[0].evidence.at("progress_start"), 0.18, 1e-9);
  EXPECT_EQ(stuck[0].severity, Severity::warning);
}

// Reward functions that never paid out (0 throughout, or only a penalty) are named together in one note over the steps
// they were logged; one that paid once did pay; a run that logs no per-function reward lists the detector as not run.
TEST(Scan, RewardFunctionsThatNeverPaidAreNamedTogether) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_component_never_paid");
  ASSERT_NE(spec, nullptr);
  std::vector<double> zeros(30, 0.0), paid_once(30, 0.0), shaping, penalty(30, 0.0), penalty_then_paid;
  paid_once[17] = 0.5;
  for (int i = 0; i < 30; ++i) shaping.push_back(0.05 + 0.01 * (i % 4));
  for (int i = 0; i < 30; i += 3) penalty[i] = -0.1 * (i % 7);
  penalty_then_paid = penalty;
  penalty_then_paid[29] = 0.25;
  auto found = run_detector_on_values(*spec, {{"rewards/correctness_reward_func", zeros},
                                              {"rewards/int_reward_func", zeros},
                                              {"rewards/strict_format_reward_func", paid_once},
                                              {"rewards/xmlcount_reward_func", shaping},
                                              {"rewards/wordle_reward_func", penalty},
                                              {"rewards/answer_reward_func", penalty_then_paid}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::info);
  EXPECT_EQ(found[0].onset_step, 1);
  EXPECT_EQ(found[0].end_step, 30);
  EXPECT_EQ(found[0].evidence.at("metrics_affected"), 3);
  EXPECT_NE(found[0].explanation.find("rewards/correctness_reward_func, rewards/int_reward_func, rewards/wordle_reward_func."),
            std::string::npos)
      << found[0].explanation;
  DetectorCatalog one;
  one.detectors.push_back(*spec);
  ScanOptions options;
  options.catalog = &one;
  RunScan none = scan_run(one_metric_run("reward/mean", steps_from_1(30), shaping), options);
  EXPECT_TRUE(none.findings.empty());
  ASSERT_EQ(none.skipped.size(), 1u);
  EXPECT_EQ(none.skipped[0].detector, "reward_component_never_paid");
}

// Two logged steps with nearly every completion cut (past the critical level) confirm truncation at the second of
// them, critical (a TRL GRPO run logged every 10 steps, 100 % cut from its first log: five points would have been 50
// steps of training on cut answers before a warning); two steps past the warning level alone do not.
TEST(Scan, TruncationPastItsCriticalLevelIsConfirmedAtTheSecondPoint) {
  const DetectorSpec* spec = builtin_detector_catalog().find("truncation");
  ASSERT_NE(spec, nullptr);
  std::vector<double> cut = {0.02, 0.01, 0.03, 0.04, 0.02, 1.0, 0.98};
  std::vector<double> half = {0.02, 0.01, 0.03, 0.04, 0.02, 0.6, 0.65};
  auto critical = run_detector_on_values(*spec, {{"response/clipped_frac", cut}});
  ASSERT_EQ(critical.size(), 1u);
  EXPECT_EQ(critical[0].severity, Severity::critical);
  EXPECT_EQ(critical[0].evidence.at("alarm_step"), 7);
  EXPECT_EQ(critical[0].evidence.at("points"), 2);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"response/clipped_frac", half}}).empty());
  // Not in a row: a step whose answers fit between two cut ones is no confirmation.
  std::vector<double> apart = {0.02, 0.01, 0.03, 0.04, 0.02, 0.95, 0.1, 0.95};
  EXPECT_TRUE(run_detector_on_values(*spec, {{"response/clipped_frac", apart}}).empty());
  // A long episode at the warning level with two critical points in it stays a warning.
  std::vector<double> mostly_half(5, 0.02);
  for (int i = 0; i < 30; ++i) mostly_half.push_back(i == 12 || i == 13 ? 0.95 : 0.5 + 0.01 * (i % 3));
  auto warning = run_detector_on_values(*spec, {{"response/clipped_frac", mostly_half}});
  ASSERT_EQ(warning.size(), 1u);
  EXPECT_EQ(warning[0].severity, Severity::warning);
}

// An episode its critical level opened early is dated again once it holds min_points points: the onset is the one
// the usual confirmation gives (a tiny TRL GRPO run's clipped fraction climbing 0.08 -> 0.27 -> 0.55 -> 0.88 -> 1).
TEST(Scan, TruncationConfirmedEarlyIsDatedAsTheUsualConfirmationDates) {
  const DetectorSpec* spec = builtin_detector_catalog().find("truncation");
  ASSERT_NE(spec, nullptr);
  DetectorSpec usual = *spec;
  usual.params["critical_min_points"] = 0;
  std::vector<double> cut = {0, 0.078, 0.266, 0.266, 0.547, 0.875, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  auto early = run_detector_on_values(*spec, {{"response/clipped_frac", cut}});
  auto late = run_detector_on_values(usual, {{"response/clipped_frac", cut}});
  ASSERT_EQ(early.size(), 1u);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(early[0].onset_step, late[0].onset_step);
  EXPECT_LT(early[0].evidence.at("alarm_step"), late[0].evidence.at("alarm_step"));
}

// Entropy under 10 % of its start is a warning; with the reward climbing over the run it is a policy converging on
// what it learned (one severity lower, the reward's rise in the evidence), with a flat reward it stays a warning.
TEST(Scan, EntropyBelowStartIsANoteWhileTheRewardClimbs) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_below_start");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->required_inputs, 1u);
  std::vector<double> entropy, climbing, flat;
  for (int i = 0; i < 120; ++i) {
    entropy.push_back(0.4 * std::exp(-i / 25.0) + 0.02);
    climbing.push_back(0.25 + 0.7 * (1 - std::exp(-i / 30.0)) + 0.01 * std::sin(i * 1.7));
    flat.push_back(0.25 + 0.01 * std::sin(i * 1.7));
  }
  auto converging = run_detector_on_values(*spec, {{"policy/entropy", entropy}, {"reward/mean", climbing}});
  ASSERT_EQ(converging.size(), 1u);
  EXPECT_EQ(converging[0].severity, Severity::info);
  EXPECT_GT(converging[0].evidence.at("progress_level"), converging[0].evidence.at("progress_start") + 0.4);
  auto collapsing = run_detector_on_values(*spec, {{"policy/entropy", entropy}, {"reward/mean", flat}});
  ASSERT_EQ(collapsing.size(), 1u);
  EXPECT_EQ(collapsing[0].severity, Severity::warning);
  EXPECT_EQ(collapsing[0].evidence.count("progress_level"), 0u);
  // The reward is context: a run that does not log it is still judged.
  auto alone = run_detector_on_values(*spec, {{"policy/entropy", entropy}});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].severity, Severity::warning);
}

// A run that logs no reward (ORPO from a base model) shows its progress in the loss: gradient norms of 70 on a loss
// of 4 that settle at 1 while the loss falls to 1 are a note; the same fall of the norm on a loss that stays put is
// the warning. The loss is read only when there is no reward.
TEST(Scan, GradientNormBelowStartIsANoteWhileTheLossFallsWithoutAReward) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_norm_below_start");
  ASSERT_NE(spec, nullptr);
  std::vector<double> norm, falling, flat, reward;
  for (int i = 0; i < 120; ++i) {
    norm.push_back(i < 6 ? 70.0 - 8 * i : 1.0 + 0.2 * std::sin(i * 1.3));
    falling.push_back(1.0 + 3.0 * std::exp(-i / 6.0) + 0.1 * std::sin(i * 1.7));
    flat.push_back(1.0 + 0.1 * std::sin(i * 1.7));
    reward.push_back(0.5 + 0.01 * std::sin(i * 1.1));
  }
  auto learning = run_detector_on_values(*spec, {{"policy/grad_norm", norm}, {"train/loss", falling}});
  ASSERT_EQ(learning.size(), 1u);
  EXPECT_EQ(learning[0].severity, Severity::info);
  EXPECT_NE(learning[0].explanation.find("train/loss fell"), std::string::npos);
  auto stuck = run_detector_on_values(*spec, {{"policy/grad_norm", norm}, {"train/loss", flat}});
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_EQ(stuck[0].severity, Severity::warning);
  auto flat_reward =
      run_detector_on_values(*spec, {{"policy/grad_norm", norm}, {"train/loss", falling}, {"reward/mean", reward}});
  ASSERT_EQ(flat_reward.size(), 1u);
  EXPECT_EQ(flat_reward[0].severity, Severity::warning);
}

// A reward that gives back most of its gain is a collapse while it stays down; when it later climbs above the
// best level it fell from, the finding stays as a note that says where it recovered.
TEST(Scan, RewardDipThatRecoversAboveItsBestIsANote) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_collapse");
  ASSERT_NE(spec, nullptr);
  std::vector<double> collapsed, recovered;
  for (int i = 0; i < 160; ++i) {
    double noise = 0.01 * std::sin(i * 1.9);
    double rise = 0.1 + 0.4 * std::min(1.0, i / 40.0);
    double dip = i >= 60 && i < 80 ? 0.1 : rise;
    collapsed.push_back((i >= 60 ? 0.1 : rise) + noise);
    recovered.push_back((i < 80 ? dip : 0.5 + 0.3 * std::min(1.0, (i - 80) / 20.0)) + noise);
  }
  auto stays = run_detector_on_values(*spec, {{"reward/mean", collapsed}});
  ASSERT_EQ(stays.size(), 1u);
  EXPECT_EQ(stays[0].severity, Severity::warning);
  auto dip = run_detector_on_values(*spec, {{"reward/mean", recovered}});
  ASSERT_EQ(dip.size(), 1u);
  EXPECT_EQ(dip[0].severity, Severity::info);
  EXPECT_GT(dip[0].evidence.at("recovered_step"), 80);
  EXPECT_NE(dip[0].explanation.find("dip and not a collapse"), std::string::npos);
}

// A sparse reward pays a few prompts now and then (the stock Phi-4 GRPO notebook: about 0.12 at most steps, 1.2-1.5
// at three of five steps, later at three in a row): a median of five points lands on such a burst for a point or
// three, and the return to the usual level read as a collapse from a best level the run never held. A level held by
// four medians in a row (the bulk of eight points) that is then given back is still one.
TEST(Scan, RewardBurstsAreNoBestLevel) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_collapse");
  ASSERT_NE(spec, nullptr);
  std::vector<double> bursts, held;
  for (int i = 0; i < 100; ++i) {
    double usual = 0.125 + 0.02 * std::sin(i * 1.3);
    bool burst = i == 22 || i == 23 || i == 25 || i == 81 || i == 82 || i == 83;
    bursts.push_back(burst ? 1.2 + 0.1 * std::sin(i) : usual);
    held.push_back(i >= 20 && i < 28 ? 1.2 + 0.02 * std::sin(i) : usual);
  }
  EXPECT_TRUE(run_detector_on_values(*spec, {{"reward/mean", bursts}}).empty());
  auto found = run_detector_on_values(*spec, {{"reward/mean", held}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::warning);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 29, 2);
}

// A detector on a noisy metric that crosses its bound by chance: quiet on `chance`, and one finding dated near
// `onset` on `changed`, the same noise until the metric really changes.
void expect_chance_quiet_and_change_found(const char* id, const char* metric, const std::vector<double>& chance,
                                          const std::vector<double>& changed, double onset, double slack) {
  const DetectorSpec* spec = builtin_detector_catalog().find(id);
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(run_detector_on_values(*spec, {{metric, chance}}).empty());
  auto found = run_detector_on_values(*spec, {{metric, changed}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), onset, slack);
}

// A per-step mean over a few completions swings widely: a length around 210 tokens that is under 30 % of its start
// at one point in six (a 30M model's GRPO run logged at every step) makes pairs of low points by chance all run long.
// The same lengths that then really collapse are found.
TEST(Scan, NoisyMetricCrossesItsBoundByChanceWithoutAnEpisode) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> noisy, collapsing;
  for (int i = 0; i < 3000; ++i) {
    double v = u(rng) < 1.0 / 6 ? 30 + 50 * u(rng) : 150 + 150 * u(rng);
    noisy.push_back(i < 3 ? 290 : v);
    collapsing.push_back(i < 3 ? 290 : i < 2000 ? v : 10 + 5 * u(rng));
  }
  expect_chance_quiet_and_change_found("length_collapse", "response/length_mean", noisy, collapsing, 2001, 3);
}

// One prompt of 8 binary-scored completions a step: every completion right (a reward spread of exactly 0) at about
// a quarter of the steps by chance, so stretches where most steps are 0 come and go (a real healthy GRPO run: 8 of
// 14 steps). An episode counted with gaps is judged by how likely that many zeros among that many steps are at the
// run's own rate; a run whose groups then all score alike is found where that began.
TEST(Scan, ZeroSpreadAtAQuarterOfTheStepsByChanceIsNoEpisode) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> chance, stuck;
  for (int i = 0; i < 2000; ++i) {
    double v = u(rng) < 0.27 ? 0.0 : 0.177 * (1 + static_cast<int>(3 * u(rng)));
    chance.push_back(i < 12 ? 0.354 : v);
    stuck.push_back(i < 12 ? 0.354 : i < 1500 ? v : (u(rng) < 0.1 ? 0.177 : 0.0));
  }
  expect_chance_quiet_and_change_found("reward_spread_zero", "reward/std", chance, stuck, 1501, 10);
}

// A small learning rate printed with 8 decimals (a DPO loop's 0.00000004 ... 0.00000001, 0) keeps one significant
// digit: its smooth decay steps 2 -> 1 -> 0 units, 50-100 % at once. That is the print's rounding; a schedule that
// restarts (1.2e-6 decaying, then 1e-5) is still a jump.
TEST(Scan, ALearningRatePrintedToOneDigitStepsWithoutJumping) {
  const DetectorSpec* spec = builtin_detector_catalog().find("lr_anomaly");
  ASSERT_NE(spec, nullptr);
  std::vector<double> printed, restarted;
  for (double units : {4.0, 3.0, 2.0, 1.0, 0.0}) printed.insert(printed.end(), 25, units * 1e-8);
  for (int i = 0; i < 60; ++i) restarted.push_back(i < 40 ? 1.2e-6 * (1.0 - 0.002 * i) : 1e-5);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/lr", printed}}).empty());
  auto found = run_detector_on_values(*spec, {{"policy/lr", restarted}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 41);
}

// Over thousands of noisy steps the best smoothed reward so far is an extreme of the noise; a swing back to the
// usual level reads as a drop from it. A reward that never moves (5,000 steps of noise around -1.85, as a stalled
// run logs it) gets no warning: each such drop came back to where it began, a dip (a note).
TEST(Scan, RewardSwingsOfAStalledNoisyRunAreDips) {
  const DetectorSpec* spec = builtin_detector_catalog().find("reward_collapse");
  ASSERT_NE(spec, nullptr);
  std::mt19937 rng(5);  // its sequence is fixed by the standard; the normal draws are Box-Muller on it
  auto uniform = [&] { return (static_cast<double>(rng()) + 0.5) / 4294967296.0; };
  std::vector<double> reward;
  for (int i = 0; i < 5000; ++i) {
    double g = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
    // Heavy-tailed, as rewards of one or two prompts per step are: one point in ten spreads three times wider.
    reward.push_back(-1.85 + 0.45 * g * (uniform() < 0.1 ? 3.0 : 1.0));
  }
  for (const auto& f : run_detector_on_values(*spec, {{"reward/mean", reward}})) {
    EXPECT_EQ(f.severity, Severity::info) << f.explanation;
    EXPECT_EQ(f.evidence.count("recovered_step"), 1u);
  }
}

// A short run's entropy that falls to a quarter of its level within its first points (a TRL RLOO run at 100x its
// learning rate: 3.17 -> 0.38 in 20 optimizer steps, 50 logged points in all) collapsed: a whole run's healthy
// sharpening does not fall that fast. One that surged and then came back down collapsed only where it passed below
// where it started, and one that came back only to its start did not collapse.
TEST(Scan, EntropyCollapseWithinAShortRun) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_collapse");
  ASSERT_NE(spec, nullptr);
  std::vector<double> fast, surge, back;
  for (int i = 0; i < 50; ++i) {
    double wiggle = 0.03 * std::sin(i * 1.7);
    fast.push_back((i < 4 ? 3.2 : i < 6 ? 2.4 - 0.6 * (i - 4) : 0.45) * (1 + wiggle));
    double s = i < 5 ? 0.18 : i < 13 ? 8.0 : i < 21 ? 1.0 : 1e-8;
    surge.push_back(s * (1 + wiggle));
    back.push_back((i < 5 ? 0.18 : i < 13 ? 8.0 : 0.2) * (1 + wiggle));
  }
  auto found = run_detector_on_values(*spec, {{"policy/entropy", fast}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::critical);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 7, 1);  // steps are 1-based in the replay
  auto surged = run_detector_on_values(*spec, {{"policy/entropy", surge}});
  ASSERT_EQ(surged.size(), 1u);
  EXPECT_EQ(surged[0].onset_step, 22);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"policy/entropy", back}}).empty());
}

TEST(Scan, LevelShiftIsOneEpisodeWithOnsetAtTheChange) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_level_shift");
  ASSERT_NE(spec, nullptr);
  std::vector<double> kl;
  for (int i = 0; i < 800; ++i) kl.push_back(0.05 + 0.01 * std::sin(i / 100.0) + 0.002 * std::sin(i * 1.7));
  for (int i = 800; i < 1000; ++i) kl.push_back(0.3 + 0.01 * std::sin(i * 1.3));
  auto found = run_detector_on_values(*spec, {{"policy/kl", kl}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 801, 2);  // steps are 1-based in the replay
  EXPECT_EQ(found[0].end_step, 1000);
  EXPECT_GT(found[0].evidence.at("shift_sigma"), 10);
}

// Memory wanders slowly (the allocator), and the wander can raise the leak detector's alarm a little before a leak
// begins; the leak is then confirmed by the climb after it. The flat-then-linear fit (onset: ramp) dates the climb
// itself; with a mean-shift split the first episode was judged against the wander and the leak dated 60 steps late.
TEST(Scan, MemoryLeakIsDatedWhereTheClimbBeganNotAtTheWander) {
  const DetectorSpec* spec = builtin_detector_catalog().find("memory_leak");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->option("onset", "shift"), "ramp");
  std::vector<double> memory;
  for (int i = 0; i < 500; ++i) {
    double wander = i >= 140 && i < 200 ? 0.08 : 0.0;  // 0.4 % above the level for 60 steps before the leak
    double leak = i >= 200 ? 0.02 * (i - 199) : 0.0;  // 20 MB a step from step 201 (1-based)
    memory.push_back(20.0 + wander + leak + 0.004 * std::sin(i * 1.7));
  }
  auto found = run_detector_on_values(*spec, {{"perf/max_memory_allocated_gb", memory}});
  ASSERT_FALSE(found.empty());
  EXPECT_LT(found[0].evidence.at("alarm_step"), 201);  // the wander raised the alarm
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 201, 5);
  DetectorSpec split = *spec;
  split.options["onset"] = "shift";
  auto split_found = run_detector_on_values(split, {{"perf/max_memory_allocated_gb", memory}});
  ASSERT_FALSE(split_found.empty());
  EXPECT_GT(std::abs(split_found[0].onset_step - 201), 20);  // rejected against the wander, found after a re-arm
}

// A leak too slow to move memory 3 % within the 100 points the level-shift detector judges (a few MB a step) is
// plain over the whole run.
TEST(Scan, SlowMemoryClimbIsFoundOverTheWholeRun) {
  const DetectorSpec* spec = builtin_detector_catalog().find("memory_growth_steady");
  ASSERT_NE(spec, nullptr);
  std::vector<double> slow, flat;
  for (int i = 0; i < 1000; ++i) {
    double jitter = 0.05 * std::sin(i * 0.05) + 0.01 * std::sin(i * 1.7);
    slow.push_back(30.0 + (i >= 400 ? 0.005 * (i - 400) : 0.0) + jitter);  // +10 % over 600 steps
    flat.push_back(30.0 + jitter);
  }
  auto found = run_detector_on_values(*spec, {{"perf/max_memory_allocated_gb", slow}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 401, 15);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"perf/max_memory_allocated_gb", flat}}).empty());
  const DetectorSpec* level = builtin_detector_catalog().find("memory_leak");
  EXPECT_TRUE(run_detector_on_values(*level, {{"perf/max_memory_allocated_gb", slow}}).empty());
}

// A loss that climbs back 50 % above its start is a failure in a preference run (a DPO loss starts at ln 2, where
// the policy is the reference); the same climb without preference metrics is not judged by this detector (a GRPO
// loss is about beta x KL and rises in healthy runs).
TEST(Scan, PreferenceLossClimbingBackIsFoundOnlyInAPreferenceRun) {
  const DetectorSpec* spec = builtin_detector_catalog().find("preference_loss_rising");
  ASSERT_NE(spec, nullptr);
  std::vector<double> loss, margin;
  for (int i = 0; i < 120; ++i) {
    loss.push_back((i < 20 ? 0.69 - 0.003 * i : 0.63 + 0.004 * (i - 20)) + 0.02 * std::sin(i * 1.7));
    margin.push_back(0.1 + 0.005 * i + 0.05 * std::sin(i * 1.3));
  }
  auto found = run_detector_on_values(*spec, {{"train/loss", loss}, {"pref/reward_margin", margin}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 21, 12);
  EXPECT_TRUE(run_detector_on_values(*spec, {{"train/loss", loss}}).empty());
  EXPECT_EQ(run_detector_on_values(*spec, {{"train/loss", loss}, {"pref/rewards_chosen", margin}}).size(), 1u);
  // An accuracy alone is no preference run: GRPO loops log their answers' accuracy as `acc` too.
  EXPECT_TRUE(run_detector_on_values(*spec, {{"train/loss", loss}, {"pref/reward_accuracy", margin}}).empty());
}

// An entropy bonus pushes entropy up on purpose: an entropy that doubles is one severity lower in a run that sets
// entropy_coeff above 0 (the run's meta, as the readers record it), and a warning with no bonus or a bonus of 0.
TEST(Scan, EntropyRiseIsOneSeverityLowerWithAnEntropyBonus) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_above_start");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> entropy;
  for (int i = 1; i <= 100; ++i) {
    steps.push_back(i);
    entropy.push_back((i < 40 ? 0.1 : 0.25) * (1 + 0.02 * std::sin(i * 1.3)));
  }
  rldk::Run run = one_metric_run("policy/entropy", steps, entropy);
  auto severity_with = [&](const char* coeff) {
    run.meta.clear();
    if (coeff != nullptr) run.meta["setting.entropy_coeff"] = coeff;
    auto findings = scan_with(*spec, run);
    return findings.size() == 1 ? findings[0] : Finding{};
  };
  Finding bonus = severity_with("0.05");
  EXPECT_EQ(bonus.detector, "entropy_above_start");
  EXPECT_EQ(bonus.severity, Severity::info);
  EXPECT_NE(bonus.explanation.find("entropy bonus (entropy_coeff 0.05)"), std::string::npos) << bonus.explanation;
  EXPECT_EQ(severity_with(nullptr).severity, Severity::warning);
  EXPECT_EQ(severity_with("0").severity, Severity::warning);
  EXPECT_EQ(severity_with(nullptr).detector, "entropy_above_start");
}

// A KL that crossed its bound, fell back under it for a few steps without ever returning to where it began, and
// crossed again for longer is one failure going on: the scan reports it once, running to the second stretch's end
// and saying so (the second episode used to be folded into the first and its 50 steps went unmentioned).
TEST(Scan, AFailureThatCrossesItsBoundAgainRunsToItsLastEpisode) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(spec, nullptr);
  std::vector<double> kl;
  for (int i = 0; i < 10; ++i) kl.push_back(0.01 * i);               // steps 1-10: rising from 0
  for (int i = 0; i < 10; ++i) kl.push_back(0.45);                   // 11-20: above 0.3
  for (int i = 0; i < 10; ++i) kl.push_back(0.22);                   // 21-30: back under, not back to the start
  for (int i = 0; i < 30; ++i) kl.push_back(i % 2 ? 0.42 : 0.48);    // 31-60: above again
  auto found = scan_with(*spec, one_metric_run("policy/kl", steps_from_1(60), kl));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_LE(found[0].onset_step, 11);
  EXPECT_EQ(found[0].end_step, 60);
  EXPECT_NE(found[0].explanation.find("It went on through step 60 (kl_above_range again from step 31)."),
            std::string::npos)
      << found[0].explanation;
}

// A gradient norm that fell from 8 to 0.1 and came back to 2 rose 20x against where it had fallen, but stays below
// where the run started: a recovery, not an explosion. The same rise from a start of 0.5 is one.
// A detector's episodes that follow one another within 2 % of the run are one failure going on: one finding that
// runs to the last of them and counts them (a clipped fraction in and out of its bound 17 times over 12,000 steps
// was 17 findings). Episodes further apart stay apart.
TEST(Scan, NearEpisodesOfOneDetectorAreOneFinding) {
  const DetectorSpec* spec = builtin_detector_catalog().find("clip_fraction_high");
  ASSERT_NE(spec, nullptr);
  std::vector<double> clip;
  for (int i = 0; i < 1000; ++i) {
    bool high = (i >= 200 && i < 300) || (i >= 310 && i < 400) || (i >= 410 && i < 500) || (i >= 800 && i < 900);
    clip.push_back(high ? 0.3 + 0.01 * (i % 3) : 0.05 + 0.01 * (i % 3));
  }
  auto found = scan_with(*spec, one_metric_run("policy/clip_frac", steps_from_1(1000), clip));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].evidence.at("episodes"), 3);
  EXPECT_GE(found[0].end_step, 495);
  EXPECT_NE(found[0].explanation.find("2 more episodes of clip_fraction_high, the last from step"), std::string::npos)
      << found[0].explanation;
  EXPECT_EQ(found[1].evidence.count("episodes"), 0u);
}

TEST(Scan, GradientExplosionMustAlsoPassTheRunsStart) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_explosion");
  ASSERT_NE(spec, nullptr);
  auto norms = [](double start) {
    return noisy_levels(200, 7, [start](int i) { return i < 20 ? start : i < 120 ? 0.1 : 2.0; });
  };
  EXPECT_TRUE(scan_with(*spec, one_metric_run("policy/grad_norm", steps_from_1(200), norms(8.0))).empty());
  auto found = scan_with(*spec, one_metric_run("policy/grad_norm", steps_from_1(200), norms(0.5)));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].onset_step), 121, 3);
}

// A GRPO norm that is ~0.0012 on steps whose groups all scored alike and ~0.06 on the others: when the second kind
// grows more frequent, the median level moves up several times, but no ordinary step before it was lower than the
// new level's peers. The mixture shifted; nothing exploded.
TEST(Scan, AMixtureOfTwoOrdinaryNormsShiftingIsNoExplosion) {
  const DetectorSpec* spec = builtin_detector_catalog().find("grad_explosion");
  ASSERT_NE(spec, nullptr);
  std::vector<double> norms;
  for (int i = 0; i < 300; ++i) {
    bool signal = i < 150 ? i % 8 == 0 : i % 2 == 0;  // 12 % of the steps, then half of them
    norms.push_back((signal ? 0.06 : 0.0012) * (1.0 + 0.05 * std::sin(0.7 * i)));
  }
  EXPECT_TRUE(scan_with(*spec, one_metric_run("policy/grad_norm", steps_from_1(300), norms)).empty());
}

TEST(Scan, RestartResetsInsteadOfAlarming) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_level_shift");
  ASSERT_NE(spec, nullptr);
  // 300 steps at 0.05, then the trainer restarts from step 100 at a different (new-config) level.
  std::vector<int64_t> steps;
  std::vector<double> kl;
  for (int i = 1; i <= 300; ++i) steps.push_back(i), kl.push_back(0.05 + 0.001 * std::sin(i));
  for (int i = 100; i <= 400; ++i) steps.push_back(i), kl.push_back(0.08 + 0.001 * std::sin(i));
  EXPECT_TRUE(scan_with(*spec, one_metric_run("policy/kl", steps, kl)).empty());
}

// Two logged names that mean one metric (a record with both train/grad_norm and actor/grad_norm) put two points at
// each step: the run still has one step per step, long runs included (they take a shortcut through one series).
TEST(Scan, StepCountIsDistinctStepsNotPoints) {
  for (int steps : {500, 150000}) {
    rldk::Run run;
    Series s;
    s.name = "policy/grad_norm";
    for (int i = 0; i < steps; ++i) {
      for (int copy = 0; copy < 2; ++copy) s.steps.push_back(i), s.values.push_back(1.0);
    }
    s.wall_times.assign(s.steps.size(), NAN);
    s.segments.assign(s.steps.size(), 0);
    run.series[s.name] = s;
    Series other;
    other.name = "policy/kl";
    for (int i = 0; i < steps; ++i) other.steps.push_back(i), other.values.push_back(0.01);
    other.wall_times.assign(other.steps.size(), NAN);
    other.segments.assign(other.steps.size(), 0);
    run.series[other.name] = other;
    DetectorCatalog none;
    ScanOptions options;
    options.catalog = &none;
    EXPECT_EQ(scan_run(run, options).step_count, static_cast<uint64_t>(steps)) << steps << " steps";
  }
}

// A KL run of 60 logged points that shifts 0.05 -> 0.12 at its 36th point, logged every `interval` steps.
rldk::Run kl_shift_run(int64_t interval) {
  rldk::Run run;
  Series s;
  s.name = "policy/kl";
  for (int i = 1; i <= 60; ++i) {
    s.steps.push_back(i * interval);
    s.values.push_back((i <= 35 ? 0.05 : 0.12) * (1 + 0.03 * std::sin(i * 1.7)));
  }
  s.wall_times.assign(s.steps.size(), NAN);
  s.segments.assign(s.steps.size(), 0);
  run.series["policy/kl"] = s;
  return run;
}

TEST(LoggingInterval, PointCountsAreStepsDividedByTheIntervalWithFloors) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_level_shift");
  ASSERT_NE(spec, nullptr);
  DetectorSpec every_step = detect::for_logging_interval(*spec, 1);
  EXPECT_EQ(every_step.params, spec->params);
  DetectorSpec every_5 = detect::for_logging_interval(*spec, 5);
  EXPECT_EQ(every_5.param("warmup", 0), 20);       // 50 steps = 10 points, floored at 20
  EXPECT_EQ(every_5.param("min_points", 0), 5);    // 15 steps = 3 points, floored at 5
  EXPECT_EQ(every_5.param("rearm_after", 0), 12);  // 60 steps = 12 points
  EXPECT_EQ(every_5.param("h", 0), spec->param("h", 0));  // thresholds and rates are not counts
  EXPECT_EQ(every_5.param("adapt_rate", 0), spec->param("adapt_rate", 0));
  // A count already below its floor stays as the catalog wrote it.
  const DetectorSpec* bound = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(detect::for_logging_interval(*bound, 20).param("min_points", 0), bound->param("min_points", 0));

  EXPECT_EQ(detect::logging_interval(kl_shift_run(10)), 10);
  EXPECT_EQ(detect::logging_interval(kl_shift_run(1)), 1);
  rldk::Run restarted = kl_shift_run(10);  // a restart goes back in steps: not a gap
  Series& kl = restarted.series["policy/kl"];
  kl.steps.insert(kl.steps.end(), {300, 310, 320});
  kl.values.insert(kl.values.end(), {0.05, 0.05, 0.05});
  EXPECT_EQ(detect::logging_interval(restarted), 10);
  // A regular interval with a missed point is still that interval; a history sampled at irregular gaps (W&B's
  // run.history()) has none, and keeps the catalog's counts.
  EXPECT_EQ(detect::logging_interval(std::vector<int64_t>{10, 20, 30, 40, 60, 70}), 10);
  EXPECT_EQ(detect::logging_interval(std::vector<int64_t>{0, 1, 3, 4, 7, 9, 10, 12}), 1);
}

// A short run (KL logged every 20 steps, 40 points) whose KL climbs from zero as the policy leaves its reference:
// the 20-point warm-up covers half of it, so a jump at its 12th point is judged only when the scan sees it whole.
rldk::Run short_kl_run(bool with_step) {
  std::vector<int64_t> steps;
  std::vector<double> kl;
  for (int i = 0; i < 40; ++i) {
    steps.push_back(20 * (i + 1));
    kl.push_back(0.03 * (1 - std::exp(-(i + 1) / 6.0)) * (with_step && i >= 11 ? 2.0 : 1.0) *
                 std::exp(0.05 * std::sin(i * 2.3)));
  }
  return one_metric_run("policy/kl", steps, kl);
}

TEST(LevelShiftKind, AShortRunSeenWholeShowsAJumpTheWarmUpHid) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_level_shift");
  ASSERT_NE(spec, nullptr);
  auto found = scan_with(*spec, short_kl_run(true));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].onset_step, 240);
  EXPECT_EQ(found[0].evidence.at("hindsight"), 1);
  EXPECT_GE(found[0].evidence.at("jump_z"), 5);  // the test; shift_sigma is the size in noise sigmas, as worded
  EXPECT_LT(found[0].evidence.at("shift_sigma"), found[0].evidence.at("jump_z"));
  // Measured from the median of the 5 points before it to that of the 5 from it on: the step and the climb.
  EXPECT_NEAR(found[0].evidence.at("reached") / found[0].evidence.at("baseline"), 2.3, 0.3);
  EXPECT_TRUE(scan_with(*spec, short_kl_run(false)).empty());
}

// A DPO run of 300 steps: the loss falls from 0.7 over 25 steps, then either freezes at 0.45 with the margin at 0.8
// (minibatch noise stays) or goes on falling slowly with the margin growing; the learning rate is constant or
// decays linearly to 0.
rldk::Run dpo_run(bool frozen, bool decaying_lr) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> loss, margin, lr;
  for (int i = 0; i < 300; ++i) {
    double course = i < 25 ? i / 25.0 : 1 + (frozen ? 0 : (i - 25) / 275.0);
    loss.push_back(0.7 - 0.25 * course + 0.03 * noise(rng));
    margin.push_back(0.8 * course + 0.3 * noise(rng));
    lr.push_back(5e-7 * (decaying_lr ? 1 - i / 300.0 : 1.0));
  }
  rldk::Run run;
  add_metric(run, "train/loss", steps_from_1(300), loss);
  add_metric(run, "pref/reward_margin", steps_from_1(300), margin);
  add_metric(run, "policy/lr", steps_from_1(300), lr);
  return run;
}

TEST(StallKind, APreferenceLossThatFreezesWhileTheRateIsHighStalled) {
  const DetectorSpec* spec = builtin_detector_catalog().find("preference_loss_stalled");
  ASSERT_NE(spec, nullptr);
  auto found = scan_with(*spec, dpo_run(true, false));
  ASSERT_EQ(found.size(), 1u);
  // Where the fall stopped, as far as the noise lets one see: the last points of the fall are within 3 sigmas of the
  // level it stopped at.
  EXPECT_LE(found[0].onset_step, 26);
  EXPECT_GE(found[0].onset_step, 15);
  EXPECT_NEAR(found[0].evidence.at("level"), 0.45, 0.02);
  // Still learning, with either schedule: no stall.
  EXPECT_TRUE(scan_with(*spec, dpo_run(false, false)).empty());
  EXPECT_TRUE(scan_with(*spec, dpo_run(false, true)).empty());
  // Frozen with a decaying rate: judged while the rate was at half its peak (steps 31-150), still a stall.
  auto decaying = scan_with(*spec, dpo_run(true, true));
  ASSERT_EQ(decaying.size(), 1u);
  EXPECT_LE(decaying[0].end_step, 151);
  // A loss that never left ln 2 never improved: dated at the first step.
  rldk::Run flat;
  add_metric(flat, "train/loss", steps_from_1(100), std::vector<double>(100, 0.6931));
  add_metric(flat, "pref/reward_margin", steps_from_1(100), std::vector<double>(100, 0.0));
  auto never = scan_with(*spec, flat);
  ASSERT_EQ(never.size(), 1u);
  EXPECT_EQ(never[0].onset_step, 1);
  EXPECT_NE(never[0].explanation.find("never improved"), std::string::npos);
}

// A KL that leaves 0 as every run's does (0.007 -> 0.05 over its first 100 steps), holds, and drifts from step 260 to
// 1 nat at step 800: the drift is dated where it began, not at the run's start, where a log scale puts the change.
TEST(SteadyTrendKind, AKlDriftIsDatedWhereItBeganNotWhereTheKlLeftZero) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_rise_steady");
  ASSERT_NE(spec, nullptr);
  std::vector<int64_t> steps;
  std::vector<double> kl;
  for (int i = 1; i <= 40; ++i) {
    int64_t step = 20 * i;
    double level = step <= 100 ? 0.007 + (0.05 - 0.007) * (step - 20) / 80.0
                   : step <= 260 ? 0.05 : 0.05 + 0.95 * (step - 260) / 540.0;
    steps.push_back(step);
    kl.push_back(level * (1 + 0.05 * std::sin(i * 2.3)));
  }
  auto found = scan_with(*spec, one_metric_run("policy/kl", steps, kl));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_GE(found[0].onset_step, 240);
  EXPECT_LE(found[0].onset_step, 300);
}

// A bound crossed four times is four findings and one set of fixes: the report's "What to change" names the detector
// once, at the steps of all its episodes.
TEST(ScanReport, FixesAreListedOncePerDetector) {
  RunScan scan;
  scan.source = "run.log";
  for (int64_t onset : {103, 245}) {
    Finding f;
    f.detector = "chosen_reward_below";
    f.metric = "pref/rewards_chosen";
    f.severity = Severity::warning;
    f.onset_step = onset;
    f.end_step = onset + 10;
    f.explanation = "fell";
    f.fixes = {"Lower the learning rate."};
    scan.findings.push_back(f);
  }
  std::string md = scan_markdown({scan});
  EXPECT_NE(md.find("**chosen_reward_below** (steps 103, 245):"), std::string::npos) << md;
  size_t first = md.find("- Lower the learning rate.");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(md.find("- Lower the learning rate.", first + 1), std::string::npos) << md;
}

TEST(LoggingInterval, ASparselyLoggedShortRunIsJudged) {
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_level_shift");
  ASSERT_NE(spec, nullptr);
  DetectorCatalog one;
  one.detectors.push_back(*spec);
  ScanOptions options;
  options.catalog = &one;
  // Logged every 10 steps, the 60 points are 600 steps: a 20-point warm-up, and the shift at step 360 is found.
  auto sparse = scan_run(kl_shift_run(10), options).findings;
  ASSERT_EQ(sparse.size(), 1u);
  EXPECT_NEAR(static_cast<double>(sparse[0].onset_step), 360, 10);
  // Logged every step, the same 60 points are 60 steps: still inside the catalog's 50-step warm-up plus 15-step
  // confirmation, so the streaming test claims nothing; the run is short enough to be seen whole at its end.
  auto dense = scan_run(kl_shift_run(1), options).findings;
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_EQ(dense[0].onset_step, 36);
  EXPECT_EQ(dense[0].evidence.at("hindsight"), 1);
}

TEST(Scan, MissingMetricIsSkippedWithReason) {
  rldk::Run run;
  Series s;
  s.name = "reward/mean";
  s.steps = {1, 2, 3};
  s.values = {0.1, 0.2, 0.3};
  run.series["reward/mean"] = s;
  RunScan scan = scan_run(run);
  bool skipped_kl = false;
  for (const auto& k : scan.skipped) {
    if (k.detector == "kl_level_shift") skipped_kl = k.reason.find("policy/kl") != std::string::npos;
  }
  EXPECT_TRUE(skipped_kl);
  EXPECT_DOUBLE_EQ(scan.health.overall, 1.0);
}

TEST(Scan, HealthFormula) {
  Finding f;
  f.area = "kl";
  f.severity = Severity::critical;
  f.onset_step = 51;
  f.end_step = 100;  // half of steps 1..100
  auto h = health_scores({f}, {"kl", "reward"}, 1, 100);
  EXPECT_NEAR(h.areas.at("kl"), 1 - 0.6 * 0.75, 1e-12);
  EXPECT_DOUBLE_EQ(h.areas.at("reward"), 1.0);
  EXPECT_NEAR(h.overall, 1 - 0.6 * 0.75, 1e-12);
}

TEST(Scan, TemplateFilling) {
  EXPECT_EQ(fill_template("{metric} at {step} is {v:.3g} ({r:.1%}) {unknown}", {{"step", 12}, {"v", 0.123456}, {"r", 0.5}},
                          {{"metric", "policy/kl"}}),
            "policy/kl at 12 is 0.123 (50.0%) {unknown}");
  // A ratio over a vanished level is no wall of digits.
  EXPECT_EQ(fill_template("{r:.1f}x, {p:.0%}", {{"r", 3.1e24}, {"p", 12345.0}}, {}), "3.1e+24x, 1.23e+06%");
}

TEST(Scan, JsonDocumentShape) {
  Finding f;
  f.detector = "kl_spike";
  f.fault = "kl_spike";
  f.area = "kl";
  f.metric = "policy/kl";
  f.evidence = {{"ratio", 6.0}, {"nan_is_dropped", NAN}};
  RunScan scan;
  scan.run_id = "r";
  scan.findings = {f};
  std::string text = scan_json({scan}).dump(-1);
  EXPECT_NE(text.find("\"schema\":\"rldk.scan/v1\""), std::string::npos);
  EXPECT_NE(text.find("\"by_severity\":{\"critical\":0,\"info\":0,\"warning\":1}"), std::string::npos);
  EXPECT_EQ(text.find("nan_is_dropped"), std::string::npos);
}

}  // namespace
}  // namespace rldk
