// The rule engine: the older tool's verified oracles, grace counted in steps, cooldown, restarts, cross-metric
// conditions, and every built-in preset rule replayed on the values it names as firing and as quiet.
#include <gtest/gtest.h>

#include <cmath>

#include "detect/kinds.h"
#include "rldk/monitor.h"
#include "rldk/rules.h"
#include "rldk/scan.h"

namespace rldk {
namespace {

RuleSet rules_from(const std::string& yaml) {
  auto parsed = parse_rules(yaml, "test.yaml");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : to_string(parsed.error()));
  return parsed.ok() ? std::move(parsed).value() : RuleSet{};
}

// Feeds one metric's values at steps first_step, first_step + step_every, ...; returns the steps that fired.
std::vector<int64_t> fire_steps(RuleEngine& engine, const std::string& metric, const std::vector<double>& values,
                                int64_t first_step = 1, int64_t step_every = 1) {
  std::vector<Alert> alerts;
  for (size_t i = 0; i < values.size(); ++i) {
    Observation o;
    o.run_id = "r";
    o.name = o.raw_name = metric;
    o.step = first_step + static_cast<int64_t>(i) * step_every;
    o.value = values[i];
    o.time = NAN;
    engine.observe(o, alerts);
    engine.flush(alerts);
  }
  std::vector<int64_t> steps;
  for (const auto& a : alerts) steps.push_back(a.step);
  return steps;
}

std::string rule(const std::string& condition, int size, const std::string& kind, int grace = 0, int cooldown = 0) {
  return "rules:\n  - id: r\n    metric: policy/kl\n    condition: \"" + condition + "\"\n    window: {size: " +
         std::to_string(size) + ", kind: " + kind + "}\n    grace_steps: " + std::to_string(grace) +
         "\n    cooldown_steps: " + std::to_string(cooldown) + "\n";
}

struct OracleCase {
  std::string condition;
  int size;
  std::string kind;
  std::vector<double> values;
  std::vector<int64_t> fires_at;
};

class RuleOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(RuleOracle, FiresExactlyAt) {
  const auto& c = GetParam();
  RuleEngine engine(rules_from(rule(c.condition, c.size, c.kind)));
  EXPECT_EQ(fire_steps(engine, "policy/kl", c.values), c.fires_at);
}

INSTANTIATE_TEST_SUITE_P(
    OlderTool, RuleOracle,
    ::testing::Values(
        OracleCase{"value > 0.5", 5, "consecutive", {0.9, 0.85, 0.2, 0.92, 0.95, 0.97, 0.99, 1.01}, {8}},
        OracleCase{"mean(value) > 0.6", 3, "rolling", {0.4, 0.8, 0.9, 0.2}, {3, 4}},
        OracleCase{"value > 0.8", 3, "consecutive", {0.2, 0.95, 0.3, 0.1}, {}},
        OracleCase{"any(value > 0.8)", 3, "rolling", {0.2, 0.95, 0.3, 0.1}, {3, 4}},
        OracleCase{"count(value > 0.5) >= 3", 4, "rolling", {0.6, 0.1, 0.2, 0.3, 0.7, 0.8, 0.9}, {7}},
        // A bare comparison in a rolling window holds for every value, not only the latest (the older tool's bug).
        OracleCase{"value < 0.12", 3, "rolling", {0.5, 0.5, 0.1}, {}}));

TEST(RuleEngine, PpoSafeKlGuardGraceAndCooldown) {
  // The older tool's run: ppo_safe with kl = 0.5 at steps 1..19 fires at steps 5, 11, 17.
  auto preset = load_preset("ppo_safe");
  ASSERT_TRUE(preset.ok());
  RuleSet only;
  only.rules.push_back(*preset->find("ppo_high_kl_guard"));
  RuleEngine engine(std::move(only));
  EXPECT_EQ(fire_steps(engine, "policy/kl", std::vector<double>(19, 0.5)), (std::vector<int64_t>{5, 11, 17}));
}

TEST(RuleEngine, GraceCountsStepsNotEvents) {
  // Logged every 10 steps: a grace of 20 steps keeps steps 10..29 silent, so the value at step 30 is the first.
  RuleEngine engine(rules_from(rule("value > 0.3", 1, "consecutive", 20, 1000)));
  EXPECT_EQ(fire_steps(engine, "policy/kl", {0.5, 0.5, 0.5, 0.5}, 10, 10), (std::vector<int64_t>{30}));
}

// A metric the dictionary does not know has no value until its first finite one: a vision-language fork's
// attention statistic, NaN from the first step, was never computed, and the non-finite guard must not stop a
// healthy run on it (the scan agrees). Once it has had a value, a NaN is one; a known metric's first NaN is too.
TEST(RuleEngine, AnUnknownMetricIsNotNonFiniteBeforeItsFirstValue) {
  auto preset = load_preset("grpo_safe");
  ASSERT_TRUE(preset.ok());
  RuleSet guard;
  guard.rules.push_back(*preset->find("grpo_safe_nonfinite_guard"));
  RuleEngine unknown(guard);
  EXPECT_EQ(fire_steps(unknown, "train/attention/mdi", {NAN, NAN, NAN, 0.4, NAN}), (std::vector<int64_t>{5}));
  RuleEngine known(guard);
  EXPECT_EQ(fire_steps(known, "value/loss", {NAN, NAN}), (std::vector<int64_t>{1}));
}

TEST(RuleEngine, RestartClearsWindowAndCooldown) {
  RuleEngine engine(rules_from(rule("value > 0.3", 2, "consecutive", 0, 1000)));
  std::vector<Alert> alerts;
  auto feed = [&](int64_t step, double v) {
    Observation o;
    o.run_id = "r";
    o.name = o.raw_name = "policy/kl";
    o.step = step;
    o.value = v;
    engine.observe(o, alerts);
    engine.flush(alerts);
  };
  feed(1, 0.5);
  feed(2, 0.5);  // fires; cooldown would silence it for 1000 steps
  feed(1, 0.5);  // restart: steps went backwards
  feed(2, 0.5);  // fires again in the new segment
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].step, 2);
  EXPECT_EQ(alerts[1].step, 2);
}

TEST(RuleEngine, CrossMetricConditionSeesTheWholeStep) {
  RuleEngine engine(rules_from(
      "rules:\n  - id: ratio\n    metric: policy/grad_norm\n"
      "    condition: metric(\"policy/grad_norm\") / metric(\"value/grad_norm\") > 4\n"));
  std::vector<Alert> alerts;
  auto feed = [&](const std::string& name, int64_t step, double v) {
    Observation o;
    o.run_id = "r";
    o.name = o.raw_name = name;
    o.step = step;
    o.value = v;
    engine.observe(o, alerts);
  };
  // The policy norm arrives before the value norm of the same step: evaluation waits for the step to complete.
  feed("policy/grad_norm", 1, 10.0);
  feed("value/grad_norm", 1, 1.0);
  feed("policy/grad_norm", 2, 2.0);
  engine.flush(alerts);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].step, 1);
  EXPECT_EQ(engine.evaluation_errors(), 1u);  // step 2 has no value/grad_norm
}

TEST(RuleEngine, LegacyWhereMatchesRawNames) {
  RuleEngine engine(rules_from("rules:\n  - id: legacy\n    where: name in (\"kl\", \"kl_mean\")\n"
                               "    condition: value > 0.35\n"));
  std::vector<Alert> alerts;
  Observation o;
  o.run_id = "r";
  o.name = "policy/kl";
  o.raw_name = "kl_mean";
  o.step = 1;
  o.value = 0.4;
  engine.observe(o, alerts);
  engine.flush(alerts);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].metric, "policy/kl");
}

TEST(RuleEngine, MessageTemplates) {
  Alert a;
  a.metric = "policy/kl";
  a.value = 0.123456;
  a.step = 42;
  a.rule_id = "kl";
  EXPECT_EQ(format_alert_message("KL {value:.3f} at step {step} ({rule_id}) {unknown}", a),
            "KL 0.123 at step 42 (kl) {unknown}");
  a.value = 0.5;
  EXPECT_EQ(format_alert_message("{value:.0%} of {name}", a), "50% of policy/kl");
}

TEST(RuleFile, ErrorsPointAtFileLineColumn) {
  auto bad = parse_rules("rules:\n  - id: r\n    metric: kl\n    condition: value >> 3\n", "my.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().context, "my.yaml:4:23");  // the second '>'
  auto no_condition = parse_rules("rules:\n  - id: r\n    metric: kl\n", "my.yaml");
  ASSERT_FALSE(no_condition.ok());
  EXPECT_NE(no_condition.error().message.find("no condition"), std::string::npos);
  auto bad_window = parse_rules("rules:\n  - id: r\n    metric: kl\n    condition: value > 1\n    window: {size: 0}\n",
                                "my.yaml");
  ASSERT_FALSE(bad_window.ok());
  EXPECT_EQ(bad_window.error().context, "my.yaml:5:20");
  auto duplicate = parse_rules("rules:\n  - {id: a, metric: kl, condition: value > 1}\n"
                               "  - {id: a, metric: kl, condition: value > 2}\n", "my.yaml");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error().message.find("duplicate rule id"), std::string::npos);
  auto unknown = parse_rules("rules:\n  - {id: a, metric: kl, condition: value > 1, aggregator: mean}\n", "my.yaml");
  ASSERT_TRUE(unknown.ok());
  ASSERT_EQ(unknown->warnings.size(), 1u);
  EXPECT_NE(unknown->warnings[0].find("aggregator"), std::string::npos);
}

TEST(RuleFile, OverridesAndRawMetricNames) {
  RuleSet set = rules_from(rule("value > 0.3", 1, "consecutive"));
  ASSERT_TRUE(apply_override(set, "r.condition=value > 0.9").ok());
  ASSERT_TRUE(apply_override(set, "r.window.size=3").ok());
  EXPECT_EQ(set.rules[0].condition_text, "value > 0.9");
  EXPECT_EQ(set.rules[0].window_size, 3);
  EXPECT_FALSE(apply_override(set, "r.window.size=zero").ok());
  EXPECT_FALSE(apply_override(set, "nope.condition=1").ok());
  ASSERT_TRUE(apply_override(set, "r.enabled=false").ok());
  EXPECT_TRUE(set.rules.empty());
  RuleSet raw = rules_from("rules:\n  - {id: a, metric: actor/ppo_kl, condition: value > 1}\n");
  EXPECT_EQ(raw.rules[0].metrics, (std::vector<std::string>{"policy/approx_kl"}));
}

// One point of run "test" into the engine.
void observe_point(RuleEngine& engine, const std::string& metric, int64_t step, double value,
                   std::vector<Alert>& alerts) {
  Observation o;
  o.run_id = "test";
  o.name = o.raw_name = metric;
  o.step = step;
  o.value = value;
  o.time = NAN;
  engine.observe(o, alerts);
}

// Feeds every metric at steps 1, 2, ... (the values of one step, then a flush, as a live monitor drains its input),
// then ends the data; returns the alerts.
std::vector<Alert> replay_to_end(RuleEngine& engine, const std::map<std::string, std::vector<double>>& series) {
  size_t length = 0;
  for (const auto& [metric, values] : series) length = std::max(length, values.size());
  std::vector<Alert> alerts;
  for (size_t i = 0; i < length; ++i) {
    for (const auto& [metric, values] : series) {
      if (i < values.size()) observe_point(engine, metric, static_cast<int64_t>(i) + 1, values[i], alerts);
    }
    engine.flush(alerts);
  }
  engine.finish(alerts);
  return alerts;
}

TEST(CatalogDetectorRule, FiresAtTheStepTheDetectorConfirms) {
  // kl_above_range (kind bound): per-token KL above its healthy warning level (0.3) for 3 consecutive points (2
  // above its critical level, 1 nat). The crossing is at step 11; the third point beyond, step 13, confirms it.
  std::vector<double> kl(10, 0.05);
  kl.insert(kl.end(), {0.5, 0.6, 0.7, 0.65, 0.6});
  RuleEngine engine(rules_from("rules:\n  - id: kl_range\n    metric: policy/kl\n    detector: kl_above_range\n"));
  std::vector<Alert> alerts = replay_to_end(engine, {{"policy/kl", kl}});
  ASSERT_EQ(alerts.size(), 1u);  // one episode, one alert
  EXPECT_EQ(alerts[0].step, 13);
  EXPECT_EQ(alerts[0].metric, "policy/kl");
  EXPECT_DOUBLE_EQ(alerts[0].value, 0.7);
  // The scan runs the same code: its finding is that episode, confirmed at the same step.
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(spec, nullptr);
  std::vector<Finding> findings = run_detector_on_values(*spec, {{"policy/kl", kl}});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].evidence.at("alarm_step"), 13.0);
}

// entropy_below_start is eased to a note when the reward rose (a healthy run sharpens its policy as it learns), so
// live the rule does not warn while the reward has risen so far, as the scan reports only a note; with a flat
// reward it warns, as the scan does. A reward that rose and then gave its gain back while the entropy stays low
// releases the held-back warning. (A healthy verl PPO run warned 3 times live while its scan was quiet.)
TEST(CatalogDetectorRule, AProgressEasedDetectorWarnsOnlyWhereTheScanWould) {
  std::vector<double> entropy, rising, flat, lost;
  for (int i = 0; i < 80; ++i) {
    double wobble = 0.03 * std::sin(i * 1.7);
    entropy.push_back((i < 20 ? 2.0 - 1.85 * i / 20.0 : 0.15) * (1 + wobble));  // 7.5 % of its start from step 21
    rising.push_back(0.1 + 0.8 * std::min(1.0, i / 40.0) + wobble);
    flat.push_back(0.3 + wobble);
    lost.push_back((i < 25 ? 0.1 + 0.8 * i / 25.0 : i < 40 ? 0.9 - 0.8 * (i - 25) / 15.0 : 0.1) + wobble);
  }
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_below_start");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->severity, Severity::warning);
  auto live = [](const std::vector<double>& e, const std::vector<double>& reward) {
    RuleEngine engine(rules_from("rules:\n  - id: entropy\n    detector: entropy_below_start\n"));
    return replay_to_end(engine, {{"policy/entropy", e}, {"reward/mean", reward}});
  };
  auto scanned = [&](const std::vector<double>& reward) {
    std::vector<Finding> found = run_detector_on_values(*spec, {{"policy/entropy", entropy}, {"reward/mean", reward}});
    return found.size() == 1 ? found[0].severity : Severity::critical;
  };
  EXPECT_TRUE(live(entropy, rising).empty());
  EXPECT_EQ(scanned(rising), Severity::info);
  EXPECT_EQ(live(entropy, flat).size(), 1u);
  EXPECT_EQ(scanned(flat), Severity::warning);
  std::vector<Alert> released = live(entropy, lost);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_GT(released[0].step, 25);
  EXPECT_EQ(scanned(lost), Severity::warning);
  // An episode that closed while the reward was up, in a run whose reward then fell back to its start: the scan,
  // judging the whole run, keeps the warning, and the rule raises it when the data ends.
  std::vector<double> dip, gave_back;
  for (int i = 0; i < 90; ++i) {
    double wobble = 0.03 * std::sin(i * 1.7);
    dip.push_back((i < 20 ? 2.0 - 1.85 * i / 20.0 : i < 45 ? 0.15 : 1.0) * (1 + wobble));
    gave_back.push_back((i < 25 ? 0.1 + 0.8 * i / 25.0 : i < 50 ? 0.9 : i < 75 ? 0.9 - 0.8 * (i - 50) / 25.0 : 0.1) +
                        wobble);
  }
  std::vector<Alert> at_end = live(dip, gave_back);
  ASSERT_EQ(at_end.size(), 1u);
  EXPECT_EQ(at_end[0].step, 90);
  std::vector<Finding> found = run_detector_on_values(*spec, {{"policy/entropy", dip}, {"reward/mean", gave_back}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::warning);
}

// The scan skips a detector whose required inputs the run never logged; live, its confirmation is held until they
// appear. preference_loss_rising needs a preference metric: a GRPO loss (about beta x KL) that climbs is not judged
// (it warned on healthy GRPO runs through the scan preset); the same climb in a run that logs margins is.
TEST(CatalogDetectorRule, HoldsItsAlarmUntilTheRunLogsItsRequiredInputs) {
  std::vector<double> loss, margin;
  for (int i = 0; i < 120; ++i) {
    loss.push_back((i < 20 ? 0.69 - 0.003 * i : 0.63 + 0.004 * (i - 20)) + 0.02 * std::sin(i * 1.7));
    margin.push_back(0.1 + 0.005 * i + 0.05 * std::sin(i * 1.3));
  }
  auto live = [](const std::map<std::string, std::vector<double>>& series) {
    RuleEngine engine(rules_from("rules:\n  - id: pref\n    detector: preference_loss_rising\n"));
    return replay_to_end(engine, series);
  };
  EXPECT_TRUE(live({{"train/loss", loss}}).empty());
  EXPECT_EQ(live({{"train/loss", loss}, {"pref/reward_margin", margin}}).size(), 1u);
}

// A spike is confirmed and reported at its first point back, so a live rule judges it as the scan does: a KL spike
// that came back inside the healthy band (a run at 0.02 nats with one batch at 1.3) is a note in the scan and no
// alert live (it warned 10 times on a healthy Unsloth run); the same spike on a run already above the band warns.
TEST(CatalogDetectorRule, ASpikeBackInsideTheHealthyRangeIsNoWarningLive) {
  auto kl_with_spike = [](double level) {
    std::vector<double> kl;
    for (int i = 0; i < 80; ++i) kl.push_back((i == 50 ? 1.3 / 0.02 * level : level) * (1 + 0.05 * std::sin(i * 1.7)));
    return kl;
  };
  auto live = [](const std::vector<double>& kl) {
    RuleEngine engine(rules_from("rules:\n  - id: spike\n    detector: kl_spike\n"));
    return replay_to_end(engine, {{"policy/kl", kl}});
  };
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_spike");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(run_detector_on_values(*spec, {{"policy/kl", kl_with_spike(0.02)}}).size(), 1u);  // the detector sees it
  EXPECT_TRUE(live(kl_with_spike(0.02)).empty());
  EXPECT_EQ(live(kl_with_spike(0.4)).size(), 1u);
}

// A clipped fraction climbing from 0.2 % (truncation_rising, live: so_far) is raised live once the points so far show
// the climb and have passed the detector's own warning level (30 % cut), not before (the scan would call the climb
// so far a note), and a climb that stays under it is never raised: the scan reports it as a note.
TEST(CatalogDetectorRule, ARisingShareIsRaisedLiveOncePastTheDetectorsOwnLevel) {
  auto climb_to = [](double end) {
    std::vector<double> v;
    for (int i = 0; i < 100; ++i) {
      double level = i < 30 ? 0.002 : 0.002 + (end - 0.002) * std::min(1.0, (i - 30) / 50.0);
      v.push_back(level * (1 + 0.05 * std::sin(i * 1.7)));
    }
    return v;
  };
  auto live = [](const std::vector<double>& share) {
    RuleEngine engine(rules_from("rules:\n  - id: rising\n    detector: truncation_rising\n"));
    return replay_to_end(engine, {{"response/clipped_frac", share}});
  };
  std::vector<double> high = climb_to(0.36);
  auto raised = live(high);
  ASSERT_EQ(raised.size(), 1u);
  size_t first_past = 0;
  while (!(high[first_past] > 0.3)) ++first_past;
  EXPECT_GE(raised[0].step, static_cast<int64_t>(first_past) + 1);
  EXPECT_LT(raised[0].step, 100);  // on the points so far, not at the end of the data
  EXPECT_TRUE(live(climb_to(0.25)).empty());
}

// The scan reports an entropy rise in a run that trains with an entropy bonus as a note (the bonus pushes entropy up
// on purpose); live, a run whose log printed entropy_coeff > 0 gets no alert from the same rule, one with a bonus of
// 0 or none printed does. (verl runs with entropy_coeff 0.001-0.05 warned live while their scans were quiet.)
TEST(CatalogDetectorRule, ADetectorEasedByASettingIsQuietWhenTheRunSetsIt) {
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_above_start");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->eased_by_setting, "entropy_coeff");
  auto live = [&](std::optional<double> coeff) {
    RuleEngine engine(rules_from("rules:\n  - id: rise\n    detector: entropy_above_start\n"));
    if (coeff) engine.setting("test", "entropy_coeff", *coeff);
    return replay_to_end(engine, spec->test_fires).size();
  };
  EXPECT_EQ(live(std::nullopt), 1u);
  EXPECT_EQ(live(0.0), 1u);
  EXPECT_EQ(live(0.01), 0u);
  // An entropy that goes on to 5x its start passes the critical level (4x): the scan lowers that one severity, to a
  // warning, and the rule raises it when the critical level is reached.
  std::vector<double> surge;
  for (int i = 0; i < 40; ++i) surge.push_back((i < 10 ? 0.9 : i < 15 ? 0.9 + 0.82 * (i - 9) : 5.0) * (1 + 0.01 * std::sin(i)));
  RuleEngine engine(rules_from("rules:\n  - id: rise\n    detector: entropy_above_start\n"));
  engine.setting("test", "entropy_coeff", 0.05);
  auto alerts = replay_to_end(engine, {{"policy/entropy", surge}});
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_GT(alerts[0].value, 4 * 0.9);
  std::vector<Finding> found = run_detector_on_values(*spec, {{"policy/entropy", surge}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::critical);  // lowered to a warning by the scan's setting
}

TEST(CatalogDetectorRule, WithoutAMetricItWatchesTheDetectorsInputs) {
  RuleSet set = rules_from("rules:\n  - id: entropy\n    detector: {id: entropy_below_start}\n"
                           "  - id: kl\n    detector: kl_above_range\n    cooldown_steps: 5\n");
  const DetectorSpec* spec = builtin_detector_catalog().find("entropy_below_start");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(set.rules[0].metrics, spec->inputs.front().second);
  ASSERT_TRUE(set.rules[0].detector.has_value());
  EXPECT_EQ(set.rules[0].detector->catalog_id, "entropy_below_start");
  EXPECT_EQ(set.rules[0].detector->kind, "bound");
  EXPECT_FALSE(set.rules[0].condition);  // the detector alone decides
  RuleEngine engine(std::move(set));
  Json report = engine.rule_report();
  EXPECT_EQ(report["kl"]["detector"].dump(-1), "{\"id\":\"kl_above_range\",\"kind\":\"bound\"}");
}

// A loss running away (loss_divergence, `live: so_far`) is raised live once the points so far pass the whole-run
// test, not when the data ends: a loss from 2.5 through zero to -100 by point 60 of 200.
TEST(CatalogDetectorRule, ARunawayIsRaisedOnThePointsSoFar) {
  std::vector<double> loss;
  for (int i = 0; i < 200; ++i) loss.push_back(i < 30 ? 2.5 - 0.01 * (i % 3) : (i < 60 ? 2.5 - 3.4 * (i - 30) : -100.0 - 0.01 * (i % 3)));
  RuleEngine engine(rules_from("rules:\n  - id: runaway\n    detector: loss_divergence\n"));
  std::vector<Alert> alerts = replay_to_end(engine, {{"train/loss", loss}});
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_LT(alerts[0].step, 80);
  EXPECT_GE(alerts[0].step, 40);
}

TEST(CatalogDetectorRule, EndOfDataVerdictsFireAtTheLastObservation) {
  // length_growth_steady (kind steady_trend) judges the whole run once the data ends.
  const DetectorSpec* spec = builtin_detector_catalog().find("length_growth_steady");
  ASSERT_NE(spec, nullptr);
  ASSERT_FALSE(spec->test_fires.empty());
  RuleEngine engine(rules_from("rules:\n  - id: growth\n    detector: length_growth_steady\n"));
  std::vector<Alert> alerts = replay_to_end(engine, spec->test_fires);
  ASSERT_EQ(alerts.size(), 1u);
  size_t points = 0;
  for (const auto& [metric, values] : spec->test_fires) points = std::max(points, values.size());
  EXPECT_EQ(alerts[0].step, static_cast<int64_t>(points));
}

// The scan judges the first of a detector's candidate metrics the run logs (GPU memory allocated before host
// memory). The live rule watches every candidate, and the one on a later candidate stands down once the run logs an
// earlier one: a verl run's host memory jumped 42 -> 80 GB at its end while its GPU memory stayed flat, and the
// monitor warned of a leak the scan never looked at.
TEST(CatalogDetectorRule, JudgesTheCandidateMetricTheScanJudges) {
  const DetectorSpec* spec = builtin_detector_catalog().find("memory_growth_steady");
  ASSERT_NE(spec, nullptr);
  std::vector<double> growing, flat;
  for (int i = 0; i < 200; ++i) {
    growing.push_back(40.0 + 0.1 * i + 0.05 * std::sin(i * 1.3));
    flat.push_back(20.0 + 0.01 * std::sin(i * 0.7));
  }
  const char* rules = "rules:\n  - id: growth\n    detector: memory_growth_steady\n";
  RuleEngine host_only(rules_from(rules));
  std::vector<Alert> alone = replay_to_end(host_only, {{"perf/cpu_memory_used_gb", growing}});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].metric, "perf/cpu_memory_used_gb");
  RuleEngine both(rules_from(rules));
  EXPECT_TRUE(replay_to_end(both, {{"perf/cpu_memory_used_gb", growing}, {"perf/max_memory_allocated_gb", flat}}).empty());
  // A rule that names its metric watches exactly that one.
  RuleEngine named(rules_from("rules:\n  - id: growth\n    metric: perf/cpu_memory_used_gb\n"
                              "    detector: memory_growth_steady\n"));
  EXPECT_EQ(replay_to_end(named, {{"perf/cpu_memory_used_gb", growing}, {"perf/max_memory_allocated_gb", flat}}).size(),
            1u);
  // The scan chooses once for the whole run: after a restart that logs host memory alone, the rule stays down.
  RuleEngine restarted(rules_from(rules));
  std::vector<Alert> alerts;
  for (int i = 0; i < 50; ++i) {
    observe_point(restarted, "perf/cpu_memory_used_gb", i + 1, flat[static_cast<size_t>(i)], alerts);
    observe_point(restarted, "perf/max_memory_allocated_gb", i + 1, flat[static_cast<size_t>(i)], alerts);
    restarted.flush(alerts);
  }
  for (int i = 0; i < 200; ++i) {
    observe_point(restarted, "perf/cpu_memory_used_gb", i + 1, growing[static_cast<size_t>(i)], alerts);
    restarted.flush(alerts);
  }
  restarted.finish(alerts);
  EXPECT_TRUE(alerts.empty());
}

TEST(CatalogDetectorRule, ScalesItsPointCountsToTheLoggingIntervalLikeTheScan) {
  // KL logged every 10 steps shifts 0.15 -> 0.36 at step 360. kl_level_shift's 50-step warm-up is 20 points here
  // (the gap between the first two steps is the interval), so the live rule confirms the shift. (The same shift
  // from 0.05 to 0.12 stays inside the healthy band: a note in the scan, and no alert, below.)
  RuleEngine engine(rules_from("rules:\n  - id: shift\n    detector: kl_level_shift\n"));
  std::vector<Alert> alerts;
  for (int i = 1; i <= 60; ++i) {
    Observation o;
    o.run_id = "test";
    o.name = o.raw_name = "policy/kl";
    o.step = i * 10;
    o.value = (i <= 35 ? 0.15 : 0.36) * (1 + 0.03 * std::sin(i * 1.7));
    o.time = NAN;
    engine.observe(o, alerts);
    engine.flush(alerts);
  }
  engine.finish(alerts);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_GT(alerts[0].step, 360);
  EXPECT_LE(alerts[0].step, 600);
}

// A level shift is reported after it has been re-armed (its end says how long it lasted), so at the alarm the live
// rule judges what the detector knew then: a KL that moved 0.05 -> 0.12 nats stayed inside its healthy band, a note
// in the scan, and no alert (healthy GRPO runs warned live while their scans were quiet).
TEST(CatalogDetectorRule, AShiftInsideTheHealthyRangeIsNoWarningLive) {
  std::vector<double> kl;
  for (int i = 0; i < 200; ++i) kl.push_back((i < 100 ? 0.05 : 0.12) * (1 + 0.03 * std::sin(i * 1.7)));
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_level_shift");
  ASSERT_NE(spec, nullptr);
  ASSERT_FALSE(run_detector_on_values(*spec, {{"policy/kl", kl}}).empty());  // the detector sees the shift
  RuleEngine engine(rules_from("rules:\n  - id: shift\n    detector: kl_level_shift\n"));
  EXPECT_TRUE(replay_to_end(engine, {{"policy/kl", kl}}).empty());
}

TEST(RuleFile, DetectorFormsAndErrors) {
  // A detector the scan judges over the whole run once it has ended has no live rule, and says so.
  auto whole_run = parse_rules("rules:\n  - {id: a, detector: reward_component_never_paid}\n", "my.yaml");
  ASSERT_FALSE(whole_run.ok());
  EXPECT_NE(whole_run.error().message.find("judges the whole run"), std::string::npos) << whole_run.error().message;
  auto unknown = parse_rules("rules:\n  - {id: a, metric: kl, detector: no_such_detector}\n", "my.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown detector 'no_such_detector'"), std::string::npos);
  EXPECT_EQ(unknown.error().context, "my.yaml:2:35");
  auto tuned = parse_rules("rules:\n  - {id: a, metric: kl, detector: {id: kl_above_range, min_points: 3}}\n", "my.yaml");
  ASSERT_FALSE(tuned.ok());
  EXPECT_NE(tuned.error().message.find("only its id"), std::string::npos);
  auto scan_only = parse_rules("rules:\n  - {id: a, metric: kl, detector: non_finite}\n", "my.yaml");
  ASSERT_FALSE(scan_only.ok());
  auto bad_kind = parse_rules("rules:\n  - {id: a, metric: kl, detector: {kind: bound}}\n", "my.yaml");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_NE(bad_kind.error().message.find("cusum or page_hinkley"), std::string::npos);
  // The rule file's own change detector keeps its form.
  RuleSet inline_form = rules_from("rules:\n  - {id: a, metric: kl, detector: {kind: cusum, k: 0.5, h: 8}}\n");
  ASSERT_TRUE(inline_form.rules[0].detector.has_value());
  EXPECT_TRUE(inline_form.rules[0].detector->catalog_id.empty());
  EXPECT_DOUBLE_EQ(inline_form.rules[0].detector->h, 8.0);
}

// Every catalog detector a rule can name, replayed on the catalog's own test values through a rule: it alerts once
// per episode the scan reports (the same code confirms them), and stays quiet on the quiet values. (The catalog's
// firing values are warnings in the scan: a rule does not raise what the scan reports as a note, below.)
std::vector<std::string> rule_detector_ids() {
  std::vector<std::string> ids;
  for (const auto& d : builtin_detector_catalog().detectors) {
    if (!rldk::detect::judged_over_metrics(d.kind)) ids.push_back(d.id);  // the scan driver's own
  }
  return ids;
}

class CatalogRules : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogRules, AlertOncePerEpisodeTheScanReports) {
  const DetectorSpec* spec = builtin_detector_catalog().find(GetParam());
  ASSERT_NE(spec, nullptr);
  for (const auto* values : {&spec->test_fires, &spec->test_quiet}) {
    if (values->empty()) continue;
    RuleEngine engine(rules_from("rules:\n  - id: r\n    detector: " + spec->id + "\n"));
    size_t alerts = replay_to_end(engine, *values).size();
    // Live, each episode alerts as it happens; the scan reports a detector's episodes that follow one another closely
    // as one finding and counts them in its evidence.
    size_t episodes = 0;
    for (const auto& f : run_detector_on_values(*spec, *values)) {
      auto merged = f.evidence.find("episodes");
      episodes += merged == f.evidence.end() ? 1 : static_cast<size_t>(merged->second);
    }
    if (values == &spec->test_fires) {
      EXPECT_GE(episodes, 1u);
    }
    EXPECT_EQ(alerts, episodes) << (values == &spec->test_fires ? "firing" : "quiet") << " values";
  }
}

INSTANTIATE_TEST_SUITE_P(Builtin, CatalogRules, ::testing::ValuesIn(rule_detector_ids()),
                         [](const auto& info) { return info.param; });

// Every preset rule, replayed on its own test values: they must make it fire, and the quiet ones must not.
struct PresetRule {
  std::string preset;
  std::string id;
};

std::vector<PresetRule> all_preset_rules() {
  std::vector<PresetRule> out;
  for (const auto& name : preset_names()) {
    auto preset = load_preset(name);
    if (!preset.ok()) continue;
    for (const auto& r : preset->rules) out.push_back({name, r.id});
  }
  return out;
}

size_t replay(const Rule& r, const std::map<std::string, std::vector<double>>& series) {
  RuleSet only;
  only.rules.push_back(r);
  RuleEngine engine(std::move(only));
  return replay_to_end(engine, series).size();
}

class PresetRules : public ::testing::TestWithParam<PresetRule> {};

TEST_P(PresetRules, FiresOnItsTestAndStaysQuietOnTheOther) {
  auto preset = load_preset(GetParam().preset);
  ASSERT_TRUE(preset.ok()) << to_string(preset.error());
  const Rule* r = preset->find(GetParam().id);
  ASSERT_NE(r, nullptr);
  ASSERT_FALSE(r->test_fires.empty()) << r->id << " names no values that make it fire";
  ASSERT_FALSE(r->test_quiet.empty()) << r->id << " names no values that must leave it quiet";
  EXPECT_GE(replay(*r, r->test_fires), 1u) << r->id << " did not fire on its test values";
  EXPECT_EQ(replay(*r, r->test_quiet), 0u) << r->id << " fired on its quiet values";
}

INSTANTIATE_TEST_SUITE_P(All, PresetRules, ::testing::ValuesIn(all_preset_rules()),
                         [](const auto& info) { return info.param.id; });

// Accuracy counts tied rewards as wrong: a slow healthy DPO run whose margins hover just above 0 sits at 0.3 for
// hundreds of steps. Where the margin is logged, it judges a policy that prefers the rejected answers.
TEST(Presets, AccuracyBelowChanceDefersToALoggedMargin) {
  auto preset = load_preset("dpo_basic");
  ASSERT_TRUE(preset.ok());
  const Rule* r = preset->find("dpo_accuracy_below_chance");
  ASSERT_NE(r, nullptr);
  std::map<std::string, std::vector<double>> series = r->test_fires;
  ASSERT_EQ(replay(*r, series), 1u);
  std::vector<double>& accuracy = series.at("pref/reward_accuracy");
  series["pref/reward_margin"].assign(accuracy.size(), 0.004);
  EXPECT_EQ(replay(*r, series), 0u);
}

TEST(Presets, AllLoadWithoutWarnings) {
  auto names = preset_names();
  EXPECT_EQ(names, (std::vector<std::string>{"dpo_basic", "grpo_safe", "grpo_strict", "kl_drift", "length_bias", "memory_leak",
                                             "ppo_safe", "ppo_strict", "rollouts", "scan"}));
  for (const auto& n : names) {
    auto p = load_preset(n);
    ASSERT_TRUE(p.ok()) << n << ": " << to_string(p.error());
    EXPECT_TRUE(p->warnings.empty()) << n;
    EXPECT_FALSE(p->rules.empty()) << n;
  }
}

// A scan preset alert says what its detector found, in the catalog's words, with the value and step it was confirmed
// at: "No reward differences at most steps: reward/std = 0 at step 48 (the scan's reward_spread_zero, live)".
TEST(Presets, ScanPresetAlertsNameTheFinding) {
  auto preset = load_preset("scan");
  ASSERT_TRUE(preset.ok());
  const Rule* r = preset->find("scan_kl_above_range");
  ASSERT_NE(r, nullptr);
  RuleSet only;
  only.rules.push_back(*r);
  RuleEngine engine(std::move(only));
  auto alerts = replay_to_end(engine, r->test_fires);
  ASSERT_FALSE(alerts.empty());
  const DetectorSpec* spec = builtin_detector_catalog().find("kl_above_range");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(alerts.front().message.rfind(spec->title + ": policy/kl = ", 0), 0u) << alerts.front().message;
  EXPECT_NE(alerts.front().message.find("at step " + std::to_string(alerts.front().step) +
                                        " (the scan's kl_above_range, live)"),
            std::string::npos)
      << alerts.front().message;
}

// `--preset grpo_safe --preset scan`, in either order: a detector the guard preset already runs alone (entropy below
// its start, a constant reward) warns once, under the guard's rule id; the scan's other detectors stay.
TEST(Presets, AGuardAndTheScanPresetWarnOnceForOneDetector) {
  for (bool scan_first : {false, true}) {
    RuleSet rules;
    for (const char* name : scan_first ? std::vector<const char*>{"scan", "grpo_safe"}
                                       : std::vector<const char*>{"grpo_safe", "scan"}) {
      auto preset = load_preset(name);
      ASSERT_TRUE(preset.ok());
      ASSERT_TRUE(merge_rule_sets(rules, std::move(preset).value()).ok());
    }
    EXPECT_NE(rules.find("grpo_safe_entropy_below_start"), nullptr);
    EXPECT_NE(rules.find("grpo_safe_reward_saturation"), nullptr);
    EXPECT_EQ(rules.find("scan_entropy_below_start"), nullptr) << scan_first;
    EXPECT_EQ(rules.find("scan_reward_constant"), nullptr) << scan_first;
    EXPECT_NE(rules.find("scan_kl_above_range"), nullptr) << scan_first;  // grpo_safe's KL rule is a condition
  }
}

namespace {

// A window as the engine would hand it to a condition, for the reference evaluations below.
class WindowContext final : public EvalContext {
 public:
  WindowContext(std::span<const double> values, std::span<const int64_t> steps) : values_(values), steps_(steps) {}
  std::span<const double> window_values() const override { return values_; }
  std::span<const int64_t> window_steps() const override { return steps_; }
  double time() const override { return NAN; }
  std::string_view name() const override { return "policy/kl"; }
  std::string_view run_id() const override { return "r"; }
  std::optional<std::string_view> tag(std::string_view) const override { return std::nullopt; }
  std::optional<std::string_view> meta(std::string_view) const override { return std::nullopt; }
  std::optional<double> metric(std::string_view) const override { return std::nullopt; }

 private:
  std::span<const double> values_;
  std::span<const int64_t> steps_;
};

}  // namespace

// The engine judges an element-wise condition on the latest value first and reads the whole window only when that
// holds; windows are contiguous buffers trimmed in bulk. Both must give exactly what evaluating the condition on the
// full window of every step gives, including restarts, NaN and windows longer than the trimming threshold.
TEST(RuleEngine, WindowsAndShortcutsMatchFullEvaluation) {
  const std::vector<std::string> conditions = {
      "value > 0.5", "abs(value - 0.5) < 0.3 and step > 3", "not isfinite(value)",
      "value > 0.2 if step % 2 == 0 else value < 0.8", "mean(value) > 0.5", "max(value) - min(value) < 0.6",
      "value > 0.1 and count() >= 2"};
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(seed >> 11) / static_cast<double>(1ULL << 53);
  };
  for (int size : {1, 3, 5, 40}) {
    for (const auto& condition : conditions) {
      // Steps 1..300 with a restart back to step 101 after step 200; a NaN now and then.
      std::vector<int64_t> steps;
      std::vector<double> values;
      for (int64_t s = 1; s <= 300; ++s) {
        steps.push_back(s <= 200 ? s : s - 100);
        double u = next();
        values.push_back(u < 0.03 ? NAN : 0.4 + 0.5 * next());
      }
      auto expression = Expression::parse(condition);
      ASSERT_TRUE(expression.ok()) << condition;
      std::vector<int64_t> expected;
      size_t segment_begin = 0;
      for (size_t i = 0; i < steps.size(); ++i) {
        if (i > 0 && steps[i] < steps[i - 1]) segment_begin = i;
        if (i + 1 - segment_begin < static_cast<size_t>(size)) continue;
        size_t begin = i + 1 - static_cast<size_t>(size);
        WindowContext context(std::span<const double>(values).subspan(begin, static_cast<size_t>(size)),
                              std::span<const int64_t>(steps).subspan(begin, static_cast<size_t>(size)));
        if (all_true(expression->evaluate(context))) expected.push_back(steps[i]);
      }
      RuleEngine engine(rules_from(rule(condition, size, "consecutive")));
      const RuleEngine::SeriesHandle handle = engine.series("r", "policy/kl", "kl");
      std::vector<Alert> alerts;
      for (size_t i = 0; i < steps.size(); ++i) {
        engine.observe(handle, steps[i], values[i], NAN, alerts);
        engine.flush(alerts);
      }
      std::vector<int64_t> fired;
      for (const auto& a : alerts) {
        fired.push_back(a.step);
        EXPECT_EQ(a.window.size(), static_cast<size_t>(size));
        EXPECT_EQ(a.run_id, "r");
        EXPECT_EQ(a.metric, "policy/kl");
      }
      EXPECT_EQ(fired, expected) << condition << " with a window of " << size;
    }
  }
}

TEST(RuleEngine, HandlesAndObservationsAreOneSeries) {
  RuleEngine engine(rules_from(rule("value > 0.35", 3, "consecutive")));
  std::vector<Alert> alerts;
  const auto handle = engine.series("r", "policy/kl", "kl");
  EXPECT_EQ(engine.series("r", "policy/kl", "kl"), handle);
  EXPECT_NE(engine.series("r", "policy/kl", "objective/kl"), handle);  // another spelling, the same series
  engine.observe(handle, 1, 0.5, NAN, alerts);
  Observation o;
  o.run_id = "r";
  o.name = "policy/kl";
  o.raw_name = "objective/kl";
  o.step = 2;
  o.value = 0.6;
  o.tags["phase"] = "train";
  engine.observe(o, alerts);
  engine.observe(handle, 3, 0.7, NAN, alerts);
  engine.flush(alerts);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].step, 3);
  EXPECT_EQ(alerts[0].window, (std::vector<double>{0.5, 0.6, 0.7}));
  EXPECT_EQ(engine.observations(), 3u);
}

}  // namespace
}  // namespace rldk
