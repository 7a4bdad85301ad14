// Whole JSON documents through StreamReader + RunBuilder: trainer_state.json, arrays of records, single records.
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

TEST(TrainerState, TrainEvalAndSummaryEntries) {
  ReadOutput out = read_text(TRAINER_STATE_JSON, "out/trainer_state.json");
  EXPECT_EQ(out.format, rldk::Format::json_document);
  EXPECT_EQ(out.detail, "json document (trainer_state: 2 train, 1 eval, 1 summary entries)");
  EXPECT_TRUE(out.diagnostics.empty()) << out.diagnostics.total();
  const rldk::Run& run = only_run(out);
  EXPECT_EQ(run.source.format, "json");
  struct Expected {
    const char* name;
    std::vector<int64_t> steps;
    std::vector<double> values;
  };
  const std::vector<Expected> expected = {
      {"train/epoch", {10, 10, 20, 20}, {0.5, 0.5, 1.0, 1.0}},
      {"policy/grad_norm", {10, 20}, {1.5, INF}},
      {"policy/lr", {10, 20}, {1e-05, 5e-06}},
      {"train/loss", {10, 20}, {0.6931, NaN}},
      {"eval/loss", {10}, {0.7}},
      {"eval/runtime", {10}, {1.25}},
      {"summary/total_flos", {20}, {1234.0}},
      {"summary/train_runtime", {20}, {12.5}},
      {"summary/train_steps_per_second", {20}, {1.6}},
      {"train_loss", {20}, {0.6}},  // deliberately unmapped (see data/metrics.yaml)
      {"summary/train_samples_per_second", {20}, {3.2}},
  };
  for (const auto& e : expected) EXPECT_TRUE(has_series(run, e.name, e.steps, e.values));
  EXPECT_EQ(run.series.size(), expected.size()) << names_of(run);
  // Top-level scalars become meta; nulls and nested values do not.
  EXPECT_EQ(run.meta.at("trainer_state.global_step"), "20");
  EXPECT_EQ(run.meta.at("trainer_state.epoch"), "1");
  EXPECT_EQ(run.meta.at("trainer_state.max_steps"), "20");
  EXPECT_EQ(run.meta.at("trainer_state.is_hyper_param_search"), "0");
  EXPECT_EQ(run.meta.count("trainer_state.best_metric"), 0u);
  EXPECT_EQ(run.meta.count("trainer_state.log_history"), 0u);
  ASSERT_EQ(run.segments.size(), 1u);
  EXPECT_EQ(run.segments[0].first_step, 10);
  EXPECT_EQ(run.segments[0].last_step, 20);
  EXPECT_EQ(run.segments[0].start_line, 9u);  // the line of the first log_history entry
}

TEST(TrainerState, OneLineDocument) {
  ReadOutput out = read_text(
      R"({"global_step": 2, "log_history": [{"loss": 0.5, "step": 1}, {"eval_loss": 0.6, "step": 1}, {"loss": 0.4, "step": 2}]})",
      "trainer_state.json");
  EXPECT_EQ(out.format, rldk::Format::json_document);
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2}, {0.5, 0.4}));
  EXPECT_TRUE(has_series(run, "eval/loss", {1}, {0.6}));
}

// A project's own export keeps the trainer's log history under another name, beside its metadata and single-metric
// series: the member whose step records carry the most fields is the run; the metadata is not a step.
TEST(TrainerState, HistoryUnderAnotherName) {
  ReadOutput out = read_text(
      R"({
          "metadata": {"run_name": "dpo", "effective_batch_size": 64},
          "learning_rate": [{"learning_rate": 0.0, "step": 1}, {"learning_rate": 1e-06, "step": 2}],
          "raw_log_history": [{"loss": 0.69, "rewards/margins": 0.01, "learning_rate": 0.0, "step": 1},
                              {"loss": 0.5, "rewards/margins": 0.4, "learning_rate": 1e-06, "step": 2}],
          "train_loss": [{"loss": 0.69, "step": 1}, {"loss": 0.5, "step": 2}]})",
      "dpo_history.json");
  EXPECT_EQ(out.format, rldk::Format::json_document);
  EXPECT_EQ(out.detail, "json document (history under raw_log_history: 2 train, 0 eval, 0 summary entries)");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2}, {0.69, 0.5}));
  EXPECT_TRUE(has_series(run, "pref/reward_margin", {1, 2}, {0.01, 0.4}));
  EXPECT_EQ(run.series.size(), 3u) << names_of(run);
}

// A project's export cut off inside its history (or in a series after it) keeps the history's records up to the cut;
// before, the member was not recognised and the whole document read as one record with no metrics.
// A pretty-printed history kept by column one level down (beside the run's config), and pandas' orient "split".
TEST(JsonDocument, ColumnTables) {
  ReadOutput nested = read_text(R"({
  "config": {"lr": 1e-05, "model": "tiny"},
  "history": {
    "step": [1, 2, 3],
    "reward": [0.1, 0.2, 0.3]
  }
}
)",
                                "training_log.json");
  EXPECT_EQ(nested.format, rldk::Format::json_document);
  EXPECT_TRUE(has_series(only_run(nested), "reward/mean", {1, 2, 3}, {0.1, 0.2, 0.3})) << nested.detail;
  EXPECT_NE(nested.detail.find("column table"), std::string::npos) << nested.detail;
  ReadOutput split = read_text(R"({
  "columns": ["loss", "kl"],
  "index": [5, 10],
  "data": [[0.5, 0.01], [null, 0.02]]
}
)",
                               "frame.json");
  EXPECT_TRUE(has_series(only_run(split), "policy/kl", {5, 10}, {0.01, 0.02})) << split.detail;
  EXPECT_TRUE(has_series(only_run(split), "train/loss", {5}, {0.5})) << split.detail;
}

TEST(TrainerState, HistoryUnderAnotherNameCutOff) {
  const std::string whole =
      "{\n\"learning_rate\": [{\"learning_rate\": 0.0, \"step\": 1}],\n"
      "\"raw_log_history\": [\n{\"loss\": 0.69, \"rewards/margins\": 0.01, \"step\": 1},\n"
      "{\"loss\": 0.5, \"rewards/margins\": 0.4, \"step\": 2},\n"
      "{\"loss\": 0.4, \"rewards/margins\": 0.6, \"step\": 3}],\n"
      "\"train_loss\": [{\"loss\": 0.69, \"step\": 1}, {\"loss\": 0.5, \"step\": 2}]}\n";
  size_t in_history = whole.find("{\"loss\": 0.4");
  ReadOutput cut = read_text(whole.substr(0, in_history + 12), "dpo_history.json");
  EXPECT_TRUE(has_series(only_run(cut), "train/loss", {1, 2}, {0.69, 0.5})) << names_of(only_run(cut));
  EXPECT_EQ(count_of(cut.diagnostics, "malformed_json"), 1u);
  EXPECT_EQ(lines_of(cut.diagnostics, "malformed_json"), std::vector<uint64_t>{6});
  ReadOutput later = read_text(whole.substr(0, whole.find("{\"loss\": 0.5, \"step\": 2}")), "dpo_history.json");
  EXPECT_TRUE(has_series(only_run(later), "train/loss", {1, 2, 3}, {0.69, 0.5, 0.4}));
  EXPECT_EQ(count_of(later.diagnostics, "malformed_json"), 1u);
}

TEST(TrainerState, EntriesWithoutStepFollowThePreviousOne) {
  ReadOutput out = read_text(
      "{\n\"log_history\": [\n{\"loss\": 0.9},\n{\"loss\": 0.5, \"step\": 5},\n{\"eval_loss\": 0.6}\n]\n}\n",
      "trainer_state.json");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {5}, {0.5}));
  EXPECT_TRUE(has_series(run, "eval/loss", {5}, {0.6}));
  EXPECT_EQ(count_of(out.diagnostics, "missing_step"), 1u);
  EXPECT_EQ(lines_of(out.diagnostics, "missing_step"), std::vector<uint64_t>{3});
}

struct BrokenCase {
  const char* name;
  std::string text;
  uint64_t line;  // where the one malformed_json diagnostic points
};

void PrintTo(const BrokenCase& c, std::ostream* os) { *os << c.name; }

class TrainerStateBroken : public ::testing::TestWithParam<BrokenCase> {};

// One defect in a document is one diagnostic at its line; entries before it are kept.
TEST_P(TrainerStateBroken, ReportsOnceAndKeepsEarlierEntries) {
  const auto& c = GetParam();
  ReadOutput out = read_text(c.text, "trainer_state.json");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {10, 20}, {0.5, 0.4}));
  EXPECT_EQ(count_of(out.diagnostics, "malformed_json"), 1u);
  EXPECT_EQ(lines_of(out.diagnostics, "malformed_json").at(0), c.line);
  EXPECT_EQ(out.diagnostics.total(), 1u);
  // Nothing after the defect is invented: no meta from keys inside a broken entry.
  for (const auto& [key, value] : run.meta) EXPECT_NE(key, "trainer_state.step") << key;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TrainerStateBroken,
    ::testing::Values(
        BrokenCase{"missing_comma_inside_entry",
                   "{\n  \"global_step\": 40,\n  \"log_history\": [\n    {\"loss\": 0.5, \"step\": 10},\n"
                   "    {\"loss\": 0.4, \"step\": 20},\n    {\"loss\": 0.3 \"step\": 30},\n"
                   "    {\"loss\": 0.2, \"step\": 40}\n  ]\n}\n",
                   6},
        BrokenCase{"missing_comma_between_entries",
                   "{\n  \"log_history\": [\n    {\"loss\": 0.5, \"step\": 10},\n    {\"loss\": 0.4, \"step\": 20}\n"
                   "    {\"loss\": 0.3, \"step\": 30}\n  ]\n}\n",
                   5},
        BrokenCase{"missing_value_then_more_keys",
                   "{\n  \"log_history\": [\n    {\"loss\": 0.5, \"step\": 10},\n    {\"loss\": 0.4, \"step\": 20},\n"
                   "    {\"loss\": 0.3, \"x\": ,\"step\": 30}\n  ]\n}\n",
                   5},
        BrokenCase{"truncated_file",
                   "{\n  \"log_history\": [\n    {\"loss\": 0.5, \"step\": 10},\n    {\"loss\": 0.4, \"step\": 20},\n"
                   "    {\"loss\": 0.3, \"st",
                   5}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(JsonDocument, ArrayOfRecords) {
  ReadOutput out = read_text("[\n  {\"step\": 1, \"loss\": 0.5},\n  {\"loss\": 0.4},\n  {\"step\": 7, \"kl\": 0.1}\n]\n",
                             "records.json");
  EXPECT_EQ(out.detail, "json document (array of records)");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {1, 1}, {0.5, 0.4}));  // no step: the array index
  EXPECT_TRUE(has_series(run, "policy/kl", {7}, {0.1}));
}

TEST(JsonDocument, SingleRecord) {
  ReadOutput out = read_text("{\n  \"step\": 3,\n  \"loss\": 0.5,\n  \"eval\": {\"loss\": 0.6}\n}\n", "final.json");
  EXPECT_EQ(out.detail, "json document (single record)");
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "train/loss", {3}, {0.5}));
  EXPECT_TRUE(has_series(run, "eval/loss", {3}, {0.6}));
}

TEST(JsonDocument, MalformedSingleRecordIsReportedAtItsLine) {
  ReadOutput out = read_text("{\n  \"step\": 3,\n  \"loss\": oops\n}\n", "final.json");
  EXPECT_EQ(out.points, 0u);
  EXPECT_EQ(count_of(out.diagnostics, "malformed_json"), 1u);
  EXPECT_EQ(lines_of(out.diagnostics, "malformed_json"), std::vector<uint64_t>{3});
}

}  // namespace
