// CSV and TSV through StreamReader + RunBuilder.
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

TEST(Csv, HeaderChangeMidFileAndSparseCells) {
  ReadOutput out = read_text(CSV_WITH_HEADER_CHANGE, "metrics.csv");
  EXPECT_EQ(out.format, rldk::Format::csv);
  EXPECT_EQ(out.detail, "csv (header changed 1 time)");
  EXPECT_TRUE(out.diagnostics.empty()) << out.diagnostics.total();
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2, 3, 4, 5}, {0.5, 0.4, 0.3, NaN, 0.2}));
  EXPECT_TRUE(has_series(run, "policy/kl", {1, 3}, {0.1, 0.05}));  // empty cells are gaps, not NaN
  EXPECT_TRUE(has_series(run, "reward/mean", {3, 4, 5}, {1.0, INF, -INF}));
  EXPECT_EQ(run.series.size(), 3u) << names_of(run);
  EXPECT_EQ(run.raw_to_canonical.at("reward"), "reward/mean");
}

// A W&B chart export: a "Step" column and "<run> - <metric>" columns with __MIN/__MAX companions, one run per name;
// the companions are not metrics and a shorter run's empty cells are no points.
TEST(Csv, WandbChartExportIsOneRunPerRunName) {
  ReadOutput out = read_text(
      "\"Step\",\"grpo-a - actor/entropy\",\"grpo-a - actor/entropy__MIN\",\"grpo-a - actor/entropy__MAX\","
      "\"grpo-b - actor/entropy\",\"grpo-b - actor/entropy__MIN\",\"grpo-b - actor/entropy__MAX\"\n"
      "\"1\",\"0.39\",\"0.39\",\"0.39\",\"0.41\",\"0.41\",\"0.41\"\n"
      "\"2\",\"0.36\",\"0.35\",\"0.37\",\"0.40\",\"0.40\",\"0.40\"\n"
      "\"3\",\"\",\"\",\"\",\"0.38\",\"0.38\",\"0.38\"",
      "entropy.csv");
  EXPECT_EQ(out.format, rldk::Format::csv);
  EXPECT_EQ(out.detail, "csv (W&B chart export: 2 runs)");
  EXPECT_TRUE(out.diagnostics.empty()) << out.diagnostics.total();
  ASSERT_EQ(out.runs.size(), 2u);
  const rldk::Run* a = nullptr;
  const rldk::Run* b = nullptr;
  for (const auto& run : out.runs) (run.run_id == "grpo-a" ? a : b) = &run;
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(has_series(*a, "policy/entropy", {1, 2}, {0.39, 0.36}));
  EXPECT_TRUE(has_series(*b, "policy/entropy", {1, 2, 3}, {0.41, 0.40, 0.38}));
  EXPECT_EQ(a->series.size(), 1u) << names_of(*a);
  EXPECT_EQ(b->series.size(), 1u) << names_of(*b);
}

TEST(Csv, MalformedRowsAreDiagnosed) {
  ReadOutput out = read_text(
      "step,loss\n"   // 1
      "1,0.5\n"       // 2
      "2,0.4,9\n"     // 3 too many cells: the extra one is ignored
      "3\n"           // 4 too few cells
      "4,\"0.3\n"     // 5 unterminated quote: row skipped
      "5,abc\n"       // 6 a text cell: not a metric, not an error
      "6,0.1\r\n",    // 7 CRLF
      "metrics.csv");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2, 6}, {0.5, 0.4, 0.1}));
  EXPECT_EQ(count_of(out.diagnostics, "csv_width"), 2u);
  EXPECT_EQ(lines_of(out.diagnostics, "csv_width"), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(count_of(out.diagnostics, "csv_quote"), 1u);
  EXPECT_EQ(lines_of(out.diagnostics, "csv_quote"), std::vector<uint64_t>{5});
  EXPECT_EQ(out.diagnostics.total(), 3u);
}

TEST(Csv, QuotedCellsAndHeaders) {
  ReadOutput out = read_text("\"step\",\"loss, smoothed\",\"kl\"\n1,\"0.5\",\"1e-3\"\n2,\"\"\"x\"\"\",0.2\n",
                             "metrics.csv");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "loss, smoothed", {1}, {0.5}));
  EXPECT_TRUE(has_series(run, "policy/kl", {1, 2}, {1e-3, 0.2}));
  EXPECT_TRUE(out.diagnostics.empty());
}

TEST(Csv, ConcatenatedFilesRepeatTheHeaderAndRestart) {
  ReadOutput out = read_text("step,loss\n1,0.5\n2,0.4\nstep,loss\n1,0.6\n2,0.3\n", "metrics.csv");
  EXPECT_EQ(out.detail, "csv (header changed 1 time)");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2, 1, 2}, {0.5, 0.4, 0.6, 0.3}));
  ASSERT_EQ(run.segments.size(), 2u);
  EXPECT_EQ(run.segments[1].start_line, 5u);
  EXPECT_EQ(run.find("train/loss")->segments, (std::vector<uint32_t>{0, 0, 1, 1}));
}

TEST(Csv, WithoutStepColumnRowsAreNumbered) {
  ReadOutput out = read_text("loss,kl\n0.5,0.1\n0.4,0.2\n", "metrics.csv");
  EXPECT_TRUE(has_series(only_run(out), "train/loss", {0, 1}, {0.5, 0.4}));
}

// TensorBoard's scalar download: one tag a file, named by the file (its '/' written '_'); Wall time is the time.
TEST(Csv, TensorBoardScalarDownloadIsTheTag) {
  ReadOutput out = read_text("Wall time,Step,Value\r\n1700000000.5,5,0.01\r\n1700000001.5,10,nan\r\n",
                             "run-ppo_run-tag-train_kl.csv");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "policy/kl", {5, 10}, {0.01, NaN})) << out.detail;
  EXPECT_EQ(run.series.size(), 1u);
  EXPECT_NE(out.detail.find("TensorBoard scalar export: train/kl"), std::string::npos) << out.detail;
}

// A folder of one run's downloads (one tag a file) is one run; a file that ends without a newline keeps its last row.
TEST(Csv, TensorBoardDownloadsOfOneRunAreOneRun) {
  rldk_test::TempDir dir;
  dir.write("curves/run-ppo-tag-train_kl.csv", "Wall time,Step,Value\n1700000000,5,0.01\n1700000001,10,0.02");
  dir.write("curves/run-ppo-tag-train_reward.csv", "Wall time,Step,Value\n1700000000,5,0.5\n1700000001,10,0.6\n");
  dir.write("curves/run-other-tag-train_kl.csv", "Wall time,Step,Value\n1700000000,5,0.03\n");
  auto runs = rldk::read_runs(dir.path("curves"));
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ(runs->at(0).run_id, "other");
  const rldk::Run& ppo = runs->at(1);
  EXPECT_EQ(ppo.run_id, "ppo");
  EXPECT_TRUE(has_series(ppo, "policy/kl", {5, 10}, {0.01, 0.02}));
  EXPECT_TRUE(has_series(ppo, "reward/mean", {5, 10}, {0.5, 0.6}));
}

TEST(Csv, PandasRowIndexIsNotAMetric) {
  for (std::string index : {"", "Unnamed: 0"}) {
    ReadOutput out = read_text(index + ",step,loss\n0,1,0.5\n1,2,0.4\n", "metrics.csv");
    const rldk::Run& run = only_run(out);
    EXPECT_TRUE(has_series(run, "train/loss", {1, 2}, {0.5, 0.4})) << index;
    EXPECT_EQ(run.series.size(), 1u) << names_of(run);
  }
}

TEST(Csv, SemicolonSeparatedWithDecimalCommas) {
  // A spreadsheet saved in a locale whose decimal mark is a comma.
  ReadOutput out = read_text("step;loss;kl;phase\n1;0,5;1e-3;warm,up\n2;0,25;0,002;main\n", "metrics.csv");
  EXPECT_EQ(out.detail, "csv (';'-separated)");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2}, {0.5, 0.25}));
  EXPECT_TRUE(has_series(run, "policy/kl", {1, 2}, {0.001, 0.002}));
  EXPECT_EQ(run.series.size(), 2u) << names_of(run);
}

TEST(Csv, StableBaselinesProgress) {
  ReadOutput out = read_text(
      "time/total_timesteps,rollout/ep_rew_mean,time/fps\n2048,1.50,900\n4096,3.00,905\n", "progress.csv");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "rollout/ep_rew_mean", {2048, 4096}, {1.5, 3.0}));
  EXPECT_TRUE(has_series(run, "time/fps", {2048, 4096}, {900, 905}));
  EXPECT_EQ(run.series.size(), 2u) << names_of(run);
}

TEST(Csv, HeaderSniffedWithoutCsvExtension) {
  ReadOutput out = read_text("step,loss\n1,0.5\n", "metrics.log");
  EXPECT_EQ(out.format, rldk::Format::csv);
  EXPECT_TRUE(has_series(only_run(out), "train/loss", {1}, {0.5}));
}

TEST(Tsv, TabSeparated) {
  ReadOutput out = read_text(TSV, "metrics.tsv");
  EXPECT_EQ(out.format, rldk::Format::tsv);
  EXPECT_EQ(out.detail, "tsv");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2}, {0.5, 0.4}));
  EXPECT_TRUE(has_series(run, "policy/kl", {1, 2, 3}, {0.1, NaN, 0.3}));
  EXPECT_TRUE(out.diagnostics.empty());
}

TEST(Tsv, SniffedFromContent) {
  ReadOutput out = read_text(TSV, "metrics.txt");
  EXPECT_EQ(out.format, rldk::Format::tsv);
  EXPECT_TRUE(has_series(only_run(out), "policy/kl", {1, 2, 3}, {0.1, NaN, 0.3}));
}

}  // namespace
