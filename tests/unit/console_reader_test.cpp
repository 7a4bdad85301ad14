// Console text through StreamReader + RunBuilder: HF/TRL dicts, OpenRLHF, verl (through Ray) and key=value lines.
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

struct Expected {
  const char* name;
  std::vector<int64_t> steps;
  std::vector<double> values;
};

void expect_all(const rldk::Run& run, const std::vector<Expected>& expected) {
  for (const auto& e : expected) EXPECT_TRUE(has_series(run, e.name, e.steps, e.values));
  EXPECT_EQ(run.series.size(), expected.size()) << names_of(run);
}

TEST(ConsoleHf, DictsNumberedByLogCall) {
  ReadOutput out = read_text(HF_CONSOLE, "train.log");
  EXPECT_EQ(out.format, rldk::Format::console);
  EXPECT_EQ(out.detail, "console (hf-dict)");
  const rldk::Run& run = only_run(out);
  // Training dicts are steps 1, 2, 3; the eval and summary dicts take the number of the last training dict.
  expect_all(run, {
                      {"train/loss", {1, 2, 3}, {0.6931, NaN, 0.5}},
                      {"policy/grad_norm", {1, 2, 3}, {1.25, INF, 0.9}},
                      {"policy/lr", {1, 2, 3}, {1e-06, 2e-06, 3e-06}},
                      {"train/epoch", {1, 2, 2, 3, 3}, {0.01, 0.02, 0.02, 0.03, 0.03}},
                      {"eval/loss", {2}, {0.7}},
                      {"eval/runtime", {2}, {1.0}},
                      {"summary/train_runtime", {3}, {10.0}},
                      {"summary/train_steps_per_second", {3}, {1.0}},
                      {"train_samples_per_second", {3}, {2.0}},
                      {"train_loss", {3}, {0.6}},
                  });
  EXPECT_EQ(run.meta.at("step_source"), "hf log call index");
  EXPECT_EQ(count_of(out.diagnostics, "malformed_dict"), 1u);
  EXPECT_EQ(lines_of(out.diagnostics, "malformed_dict"), std::vector<uint64_t>{7});
  EXPECT_EQ(out.diagnostics.total(), 1u);
}

TEST(ConsoleHf, DictsWithAStepUseIt) {
  ReadOutput out = read_text("{'loss': 0.5, 'step': 100}\n{'loss': 0.4, 'step': 200}\n", "train.log");
  const rldk::Run& run = only_run(out);
  expect_all(run, {{"train/loss", {100, 200}, {0.5, 0.4}}});
  EXPECT_EQ(run.meta.count("step_source"), 0u);
}

TEST(ConsoleHf, DictGluedToAProgressBar) {
  ReadOutput out = read_text(
      "{'loss': 0.9, 'epoch': 0.1}\n"
      " 50%|#####     | 1/2 [00:01<00:01,  1.00it/s]{'loss': 0.8, 'epoch': 0.2}\n",
      "train.log");
  EXPECT_TRUE(has_series(only_run(out), "train/loss", {1, 2}, {0.9, 0.8}));
  EXPECT_TRUE(out.diagnostics.empty());
}

TEST(ConsoleHf, CutOffDictIsReported) {
  ReadOutput out = read_text("{'loss': 0.9, 'epoch': 0.1}\n{'loss': 0.8, 'ep\n{'loss': 0.7, 'epoch': 0.3}\n",
                             "train.log");
  // The broken dict is not a log call: the next one is the second.
  EXPECT_TRUE(has_series(only_run(out), "train/loss", {1, 2}, {0.9, 0.7}));
  EXPECT_EQ(lines_of(out.diagnostics, "malformed_dict"), std::vector<uint64_t>{2});
}

TEST(ConsoleOpenRlhf, GlobalStepDictsAndEvalMetrics) {
  ReadOutput out = read_text(OPENRLHF_CONSOLE, "openrlhf.log");
  EXPECT_EQ(out.format, rldk::Format::console);
  EXPECT_EQ(out.detail, "console (openrlhf)");
  const rldk::Run& run = only_run(out);
  expect_all(run, {
                      {"policy/loss", {1, 2}, {0.00082, NaN}},
                      {"policy/lr", {1, 2}, {1e-06, 1e-06}},
                      {"policy/grad_norm", {1, 2}, {0.3232, INF}},
                      {"policy/kl", {1, 2}, {0.001, 0.002}},
                      {"reward/mean", {1, 2}, {0.12, 0.14}},
                      {"response/length_mean", {1, 2}, {402.0, 404.0}},
                      {"response/clipped_frac", {1, 2}, {0.0, 0.0}},
                      {"policy/clip_frac", {1, 2}, {0.01, 0.01}},
                      {"perf/step_time", {1, 2}, {94.08, 95.82}},
                      {"eval/reward", {2}, {0.4}},
                  });
  // The tqdm postfix (policy_loss=..., kl=...) is not read as key=value metrics; the cut-off dict is reported.
  EXPECT_EQ(count_of(out.diagnostics, "malformed_dict"), 1u);
  EXPECT_EQ(lines_of(out.diagnostics, "malformed_dict"), std::vector<uint64_t>{5});
  EXPECT_EQ(out.diagnostics.total(), 1u);
}

// OpenRLHF runs on DeepSpeed, whose log lines start with "[2024-05-01 12:00:00,000] [INFO] ...": a log whose first
// line is one of them is console text, not a JSON array.
TEST(ConsoleOpenRlhf, LogStartingWithBracketedDeepSpeedLine) {
  ReadOutput out = read_text(
      "[2024-05-01 12:00:00,000] [INFO] [real_accelerator.py:191:get_accelerator] Setting ds_accelerator to cuda "
      "(auto detect)\n" +
          OPENRLHF_CONSOLE,
      "openrlhf.log");
  EXPECT_EQ(out.format, rldk::Format::console);
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_TRUE(has_series(out.runs[0], "policy/kl", {1, 2}, {0.001, 0.002}));
  EXPECT_EQ(count_of(out.diagnostics, "malformed_json"), 0u);
}

TEST(ConsoleVerl, StepLinesWithNumpyWrappersAndRayPrefixes) {
  ReadOutput out = read_text(VERL_CONSOLE, "verl.log");
  EXPECT_EQ(out.format, rldk::Format::console);
  EXPECT_EQ(out.detail, "console (verl)");
  EXPECT_TRUE(out.diagnostics.empty()) << out.diagnostics.total();
  const rldk::Run& run = only_run(out);
  // training/global_step is a step field, val/note a text value: neither is a series.
  expect_all(run, {
                      {"global_seqlen/min", {1}, {69010.0}},
                      {"policy/entropy", {1, 2, 3}, {0.5964, NaN, 0.55}},
                      {"policy/kl_loss", {1}, {0.001}},
                      {"policy/loss", {1}, {-0.025}},
                      {"policy/approx_kl", {1, 2}, {0.0003, INF}},
                      {"reward/mean", {1, 2, 3}, {-0.4964, -0.48, -0.47}},
                      {"response/length_mean", {1}, {318.997}},
                      {"train/epoch", {1, 2}, {0.0, 0.0}},
                      {"perf/step_time", {1, 2}, {12.5, 12.0}},
                  });
  EXPECT_EQ(run.raw_to_canonical.at("critic/score/mean"), "reward/mean");
}

TEST(ConsoleKeyValue, GenericKeyValueLines) {
  ReadOutput out = read_text(KEY_VALUE_CONSOLE, "train.txt");
  EXPECT_EQ(out.format, rldk::Format::console);
  EXPECT_EQ(out.detail, "console (key=value)");
  EXPECT_TRUE(out.diagnostics.empty());
  const rldk::Run& run = only_run(out);
  // A line without a step follows the previous one; "--lr=0.5" command-line flags are not metrics.
  expect_all(run, {
                      {"policy/kl", {10, 11, 12, 5, 30}, {0.12, NaN, 0.2, 0.3, 0.4}},
                      {"reward/mean", {10, 11, 12}, {0.5, INF, 0.7}},
                      {"policy/lr", {11}, {1e-05}},
                      {"train/loss", {20}, {0.1}},
                  });
  ASSERT_EQ(run.segments.size(), 2u);  // step=5 after step=20: a restart
  EXPECT_EQ(run.segments[0].first_step, 10);
  EXPECT_EQ(run.segments[0].last_step, 20);
  EXPECT_EQ(run.segments[0].start_line, 2u);
  EXPECT_EQ(run.segments[1].first_step, 5);
  EXPECT_EQ(run.segments[1].last_step, 30);
  EXPECT_EQ(run.segments[1].start_line, 6u);
  EXPECT_EQ(run.find("policy/kl")->segments, (std::vector<uint32_t>{0, 0, 0, 1, 1}));
}

TEST(ConsoleMixed, ShapesCanShareAFile) {
  ReadOutput out = read_text(
      "Loading model...\n"
      "{'loss': 0.5}\n"
      "(TaskRunner pid=1) step:5 - actor/ppo_kl:0.1\n"
      "Global step 6: {'kl': 0.2}\n"
      "step=7 reward=0.9\n",
      "mixed.log");
  EXPECT_EQ(out.detail, "console (hf-dict, key=value, openrlhf, verl)");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1}, {0.5}));
  EXPECT_TRUE(has_series(run, "policy/approx_kl", {5}, {0.1}));
  EXPECT_TRUE(has_series(run, "policy/kl", {6}, {0.2}));
  EXPECT_TRUE(has_series(run, "reward/mean", {7}, {0.9}));
}

TEST(ConsoleText, OrdinaryTextIsNotAnError) {
  ReadOutput out = read_text("Loading checkpoint shards: 100%|##########| 2/2 [00:01<00:00]\nHello, world\n{}\n",
                             "train.log");
  EXPECT_EQ(out.format, rldk::Format::console);
  EXPECT_EQ(out.points, 0u);
  EXPECT_TRUE(out.diagnostics.empty()) << out.diagnostics.total();
}

}  // namespace
