// StreamReader mechanics shared by every format: incremental feeding, line numbering, restarts and segments,
// binary input, byte-order marks and reader options.
#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "rldk/metric_dictionary.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

struct FormatCase {
  const char* name;
  std::string text;
  std::string path;
};

std::vector<FormatCase> all_formats() {
  return {
      {"long_form_jsonl", LONG_FORM_JSONL, "events.jsonl"},
      {"wide_jsonl", WIDE_JSONL, "metrics.jsonl"},
      {"verl_jsonl", VERL_JSONL, "verl.jsonl"},
      {"trainer_state", TRAINER_STATE_JSON, "trainer_state.json"},
      {"csv", CSV_WITH_HEADER_CHANGE, "metrics.csv"},
      {"tsv", TSV, "metrics.tsv"},
      {"hf_console", HF_CONSOLE, "train.log"},
      {"openrlhf_console", OPENRLHF_CONSOLE, "openrlhf.log"},
      {"verl_console", VERL_CONSOLE, "verl.log"},
      {"key_value_console", KEY_VALUE_CONSOLE, "train.txt"},
      // Same data with CRLF line endings and without the final newline.
      {"wide_jsonl_crlf", "{\"step\": 1, \"loss\": 0.5}\r\n{\"step\": 2, \"loss\": 0.4}\r\n", "m.jsonl"},
      {"csv_no_final_newline", "step,loss\n1,0.5\n2,0.4", "m.csv"},
      {"malformed_jsonl", "{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\":\n\n{\"step\": 1, \"loss\": 0.7}\n",
       "m.jsonl"},
  };
}

void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.name; }

class Incremental : public ::testing::TestWithParam<FormatCase> {};

void expect_same_output(const ReadOutput& whole, const ReadOutput& pieces, const std::string& how) {
  EXPECT_EQ(rldk::format_name(pieces.format), rldk::format_name(whole.format)) << how;
  EXPECT_EQ(pieces.detail, whole.detail) << how;
  EXPECT_EQ(pieces.lines, whole.lines) << how;
  EXPECT_EQ(pieces.points, whole.points) << how;
  EXPECT_TRUE(same_diagnostics(whole.diagnostics, pieces.diagnostics)) << how;
  ASSERT_EQ(pieces.runs.size(), whole.runs.size()) << how;
  for (size_t i = 0; i < whole.runs.size(); ++i) EXPECT_TRUE(same_run(whole.runs[i], pieces.runs[i])) << how;
}

TEST_P(Incremental, ByteByByteEqualsAllAtOnce) {
  const auto& c = GetParam();
  ReadOutput whole = read_text(c.text, c.path);
  ASSERT_GT(whole.points, 0u) << "fixture produced nothing";
  expect_same_output(whole, read_text(c.text, c.path, 1), "one byte at a time");
}

TEST_P(Incremental, RandomPiecesEqualAllAtOnce) {
  const auto& c = GetParam();
  ReadOutput whole = read_text(c.text, c.path);
  for (unsigned seed = 1; seed <= 5; ++seed) {
    expect_same_output(whole, read_text_random_chunks(c.text, c.path, seed, 17), "seed " + std::to_string(seed));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Incremental, ::testing::ValuesIn(all_formats()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Segments, StepGoingBackwardsStartsANewSegment) {
  ReadOutput out = read_text(
      "{\"step\": 1, \"loss\": 1.0, \"kl\": 0.1}\n"    // 1
      "{\"step\": 2, \"loss\": 0.9, \"kl\": 0.2}\n"    // 2
      "{\"step\": 3, \"loss\": 0.8}\n"                 // 3
      "{\"step\": 2, \"loss\": 0.85, \"kl\": 0.25}\n"  // 4 resumed from a checkpoint at step 2
      "{\"step\": 3, \"loss\": 0.75, \"kl\": 0.3}\n"   // 5
      "{\"step\": 3, \"loss\": 0.74}\n"                // 6 the same step again is not a restart
      "{\"step\": 1, \"loss\": 0.7}\n",                // 7 restarted from scratch
      "m.jsonl");
  const rldk::Run& run = only_run(out);
  ASSERT_EQ(run.segments.size(), 3u);
  struct Seg {
    int64_t first, last;
    uint64_t line;
  };
  const Seg expected[] = {{1, 3, 1}, {2, 3, 4}, {1, 1, 7}};
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run.segments[i].index, i);
    EXPECT_EQ(run.segments[i].first_step, expected[i].first) << i;
    EXPECT_EQ(run.segments[i].last_step, expected[i].last) << i;
    EXPECT_EQ(run.segments[i].start_line, expected[i].line) << i;
  }
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2, 3, 2, 3, 3, 1}, {1.0, 0.9, 0.8, 0.85, 0.75, 0.74, 0.7}));
  EXPECT_EQ(run.find("train/loss")->segments, (std::vector<uint32_t>{0, 0, 0, 1, 1, 1, 2}));
  EXPECT_EQ(run.find("policy/kl")->segments, (std::vector<uint32_t>{0, 0, 1, 1}));
}

TEST(Segments, LongFormRestart) {
  ReadOutput out = read_text(
      "{\"name\":\"kl\",\"step\":5,\"value\":1}\n{\"name\":\"kl\",\"step\":6,\"value\":2}\n"
      "{\"name\":\"kl\",\"step\":3,\"value\":3}\n",
      "e.jsonl");
  const rldk::Run& run = only_run(out);
  ASSERT_EQ(run.segments.size(), 2u);
  EXPECT_EQ(run.segments[1].first_step, 3);
  EXPECT_EQ(run.segments[1].start_line, 3u);
  EXPECT_EQ(run.find("policy/kl")->segments, (std::vector<uint32_t>{0, 0, 1}));
}

// All points of one record were logged together, after the restart: they belong to the same segment whatever the
// order of the keys in the record (sorted JSON puts "kl" before "loss").
TEST(Segments, PointsOfOneRecordShareASegmentWhateverTheKeyOrder) {
  for (const char* restart_line : {"{\"kl\": 0.2, \"loss\": 0.85, \"step\": 2}\n",
                                   "{\"loss\": 0.85, \"kl\": 0.2, \"step\": 2}\n"}) {
    std::string text = std::string("{\"kl\": 0.1, \"loss\": 1.0, \"step\": 1}\n") +
                       "{\"loss\": 0.9, \"step\": 2}\n{\"loss\": 0.8, \"step\": 3}\n" + restart_line;
    ReadOutput out = read_text(text, "m.jsonl");
    const rldk::Run& run = only_run(out);
    ASSERT_EQ(run.segments.size(), 2u) << restart_line;
    EXPECT_EQ(run.find("train/loss")->segments, (std::vector<uint32_t>{0, 0, 0, 1})) << restart_line;
    EXPECT_EQ(run.find("policy/kl")->segments, (std::vector<uint32_t>{0, 1})) << restart_line;
  }
}

TEST(StreamReader, LinesAreCountedFromOneIncludingBlankLines) {
  ReadOutput out = read_text("\n\n  \n{\"step\": 1, \"loss\": 0.5}\n\n{\"step\": 2, \"loss\": \n", "m.jsonl");
  EXPECT_EQ(out.format, rldk::Format::jsonl);
  EXPECT_EQ(out.lines, 6u);
  EXPECT_EQ(lines_of(out.diagnostics, "malformed_json"), std::vector<uint64_t>{6});
  EXPECT_EQ(only_run(out).segments.at(0).start_line, 4u);
}

TEST(StreamReader, OverlongLineIsSkippedAndCounted) {
  rldk::ReadOptions options;
  options.run_id = "r";
  rldk::RunBuilder builder;
  rldk::Diagnostics diagnostics;
  rldk::StreamReader reader(rldk::SourceInfo{"m.jsonl", "", ""}, options, builder, diagnostics);
  const std::string chunk(size_t{1} << 20, 'x');
  for (int i = 0; i < 65; ++i) reader.feed(chunk);  // one line of 65 MiB, over the 64 MiB limit
  reader.feed("\n{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\"");
  reader.feed(": 0.4}\n");
  reader.finish();
  EXPECT_EQ(reader.lines(), 3u);
  EXPECT_EQ(reader.format(), rldk::Format::jsonl);
  EXPECT_EQ(count_of(diagnostics, "line_too_long"), 1u);
  EXPECT_EQ(lines_of(diagnostics, "line_too_long"), std::vector<uint64_t>{1});
  EXPECT_EQ(diagnostics.total(), 1u);
  auto runs = builder.take();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(has_series(runs[0], "train/loss", {1, 2}, {0.5, 0.4}));
  EXPECT_EQ(runs[0].segments.at(0).start_line, 2u);
}

TEST(StreamReader, ByteOrderMarkIsSkipped) {
  ReadOutput out = read_text("\xEF\xBB\xBF{\"step\": 1, \"loss\": 0.5}\n", "m.jsonl");
  EXPECT_EQ(out.format, rldk::Format::jsonl);
  EXPECT_TRUE(out.diagnostics.empty());
  EXPECT_TRUE(has_series(only_run(out), "train/loss", {1}, {0.5}));
}

// A followed UTF-16 file (Windows PowerShell's `>` redirect) or stream arrives a byte at a time: the mark is found in
// its first two bytes and every later chunk is transcoded, with code units split across chunks.
TEST(StreamReader, Utf16ArrivingAByteAtATimeIsRead) {
  std::string utf8 = "{'loss': 0.5, 'kl': 0.01, 'epoch': 1}\n{'loss': 0.4, 'kl': 0.02, 'epoch': 2}\n";
  for (bool big_endian : {false, true}) {
    std::string bytes = big_endian ? "\xFE\xFF" : "\xFF\xFE";
    for (char c : utf8) bytes += big_endian ? std::string{'\0', c} : std::string{c, '\0'};
    rldk::ReadOptions options;
    options.run_id = "r";
    options.live = true;
    rldk::RunBuilder builder;
    rldk::Diagnostics diagnostics;
    rldk::StreamReader reader(rldk::SourceInfo{"train.log", "", ""}, options, builder, diagnostics);
    for (char c : bytes) reader.feed(std::string_view(&c, 1));
    reader.finish();
    EXPECT_FALSE(reader.binary());
    auto runs = builder.take();
    ASSERT_EQ(runs.size(), 1u) << big_endian;
    EXPECT_TRUE(has_series(runs[0], "train/loss", {1, 2}, {0.5, 0.4})) << big_endian;
  }
}

TEST(StreamReader, LastLineWithoutNewlineIsReadAtFinish) {
  rldk::ReadOptions options;
  options.run_id = "r";
  rldk::RunBuilder builder;
  rldk::Diagnostics diagnostics;
  rldk::StreamReader reader(rldk::SourceInfo{"m.jsonl", "", ""}, options, builder, diagnostics);
  reader.feed("{\"step\": 1, \"loss\": 0.5}\n{\"step\": 2, \"loss\": 0.4}");
  EXPECT_EQ(reader.points(), 1u);  // the partial line waits for more bytes (a growing file)
  EXPECT_EQ(reader.lines(), 1u);
  reader.feed("\n{\"step\": 3,");
  EXPECT_EQ(reader.points(), 2u);
  reader.feed(" \"loss\": 0.3}");
  reader.finish();
  EXPECT_EQ(reader.points(), 3u);
  EXPECT_EQ(reader.lines(), 3u);
  auto runs = builder.take();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(has_series(runs[0], "train/loss", {1, 2, 3}, {0.5, 0.4, 0.3}));
}

TEST(StreamReader, BinaryDataIsDetected) {
  for (std::string text : {std::string("\x00\x01\x02\x03garbage\n", 12), std::string("PK\x03\x04\x00\x00\n", 7),
                           std::string("abc\x00\n{\"step\": 1, \"loss\": 1}\n", 29)}) {
    ReadOutput out = read_text(text, "blob.bin");
    rldk::RunBuilder builder;
    rldk::Diagnostics diagnostics;
    rldk::StreamReader reader(rldk::SourceInfo{"blob.bin", "", ""}, {}, builder, diagnostics);
    reader.feed(text);
    EXPECT_TRUE(reader.binary());
    EXPECT_EQ(out.points, 0u);
    EXPECT_TRUE(out.runs.empty());
  }
}

TEST(StreamReader, TextIsNotBinary) {
  rldk::RunBuilder builder;
  rldk::Diagnostics diagnostics;
  rldk::StreamReader reader(rldk::SourceInfo{"m.jsonl", "", ""}, {}, builder, diagnostics);
  reader.feed("{\"step\": 1, \"loss\": 0.5}\n");
  reader.finish();
  EXPECT_FALSE(reader.binary());
  EXPECT_EQ(reader.runs(), 1u);
}

TEST(RunModel, Accessors) {
  ReadOutput out = read_text("{\"step\": 5, \"a\": 1}\n{\"step\": 9, \"a\": NaN, \"b\": 2}\n{\"step\": 3, \"b\": 3}\n",
                             "m.jsonl");
  const rldk::Run& run = only_run(out);
  EXPECT_EQ(run.first_step(), 3);
  EXPECT_EQ(run.last_step(), 9);
  EXPECT_EQ(run.point_count(), 4u);
  EXPECT_EQ(run.find("a")->first_non_finite(), 1u);
  EXPECT_EQ(run.find("b")->first_non_finite(), 2u);  // none: size()
  EXPECT_EQ(run.find("b")->non_finite_count(), 0u);
  EXPECT_EQ(run.find("zzz"), nullptr);
  EXPECT_EQ(rldk::Run{}.first_step(), 0);
  EXPECT_EQ(rldk::Run{}.last_step(), 0);
}

TEST(ReadOptions, CanonicalizeFalseKeepsRawNames) {
  rldk::ReadOptions options;
  options.canonicalize = false;
  ReadOutput out = read_text(WIDE_JSONL, "metrics.jsonl", 0, options);
  const rldk::Run& run = only_run(out);
  EXPECT_TRUE(has_series(run, "loss", {1, 2, 3}, {0.5, NaN, 0.3}));
  EXPECT_TRUE(has_series(run, "actor/ppo_kl", {1, 2}, {0.01, 0.02}));
  EXPECT_EQ(run.find("train/loss"), nullptr);
  EXPECT_EQ(run.raw_to_canonical.at("loss"), "loss");
}

TEST(ReadOptions, CustomDictionary) {
  auto dict = rldk::MetricDictionary::from_yaml(R"(
fields:
  step: [it]
  time: [t]
metrics:
  - name: custom/score
    unit: reward
    aggregation: batch_mean
    description: test
    aliases:
      mine: [score, sc]
)",
                                                "custom.yaml");
  ASSERT_TRUE(dict.ok()) << rldk::to_string(dict.error());
  rldk::ReadOptions options;
  options.dictionary = dict.value().get();
  ReadOutput out = read_text("{\"it\": 4, \"t\": 1704067200, \"score\": 1, \"sc\": 2, \"step\": 9}\n", "m.jsonl", 0,
                             options);
  const rldk::Run& run = only_run(out);
  // "step" is no step field in this dictionary: it is a metric, and "it" gives the step. "score" and "sc" name one
  // metric: the record gives it one point (the first name's), and the other value is reported, not lost silently.
  EXPECT_TRUE(has_series(run, "custom/score", {4}, {1.0}));
  ASSERT_EQ(out.diagnostics.total(), 1u);
  EXPECT_EQ(out.diagnostics.counts().count("duplicate_metric"), 1u);
  EXPECT_TRUE(has_series(run, "step", {4}, {9.0}));
  EXPECT_DOUBLE_EQ(run.find("custom/score")->wall_times[0], 1704067200.0);
}

// TRL logs the mean completion length under two names, one of them rounded: the same value, nothing to report (the
// point is the current name's, completions/mean_length).
TEST(StreamReader, TwoNamesForOneValuePrintedDifferentlyAreNotReported) {
  ReadOutput out = read_text("{\"step\": 1, \"completion_length\": 121.2, \"completions/mean_length\": 121.25}\n",
                             "trainer.jsonl");
  EXPECT_TRUE(has_series(only_run(out), "response/length_mean", {1}, {121.25}));
  EXPECT_EQ(out.diagnostics.total(), 0u);
}

// An Unsloth build of TRL logs completion_length as the longest completion beside completions/mean_length: of two
// names for one metric, the one the dictionary lists first for its framework is kept, wherever it is in the record.
TEST(StreamReader, OfTwoNamesForOneMetricTheCurrentNameIsKept) {
  ReadOutput out = read_text("{\"step\": 1, \"completion_length\": 2048.0, \"completions/mean_length\": 1074.8125}\n",
                             "trainer.jsonl");
  EXPECT_TRUE(has_series(only_run(out), "response/length_mean", {1}, {1074.8125}));
  ASSERT_EQ(out.diagnostics.counts().count("duplicate_metric"), 1u);
  ASSERT_FALSE(out.diagnostics.examples().empty());
  EXPECT_NE(out.diagnostics.examples().front().message.find("completion_length = 2048 was dropped"), std::string::npos)
      << out.diagnostics.examples().front().message;
}

TEST(ReadOptions, ForcedFormatOverridesSniffing) {
  struct Case {
    rldk::Format format;
    std::string text;
    std::string path;
    const char* series;
    std::vector<int64_t> steps;
    std::vector<double> values;
  };
  const Case cases[] = {
      // A JSONL-looking line read as console: the HF dict shape.
      {rldk::Format::console, "{\"step\": 3, \"loss\": 0.5}\n", "m.jsonl", "train/loss", {3}, {0.5}},
      // A .txt file whose first line is not a header-looking row, read as CSV anyway.
      {rldk::Format::csv, "step,policy loss\n1,0.5\n", "m.txt", "policy/loss", {1}, {0.5}},  // "policy loss" folds to the alias policy_loss,
      // A .csv name that holds JSON lines.
      {rldk::Format::jsonl, "{\"step\": 2, \"kl\": 0.1}\n", "wrong.csv", "policy/kl", {2}, {0.1}},
  };
  for (const Case& c : cases) {
    rldk::ReadOptions options;
    options.format = c.format;
    ReadOutput out = read_text(c.text, c.path, 0, options);
    EXPECT_EQ(rldk::format_name(out.format), rldk::format_name(c.format)) << c.text;
    ASSERT_EQ(out.runs.size(), 1u) << c.text;
    EXPECT_TRUE(has_series(out.runs[0], c.series, c.steps, c.values)) << c.text;
  }
}

TEST(ReadOptions, RunIdFromOptions) {
  rldk::ReadOptions options;
  options.run_id = "my-run";
  ReadOutput out = read_text("{\"step\": 1, \"loss\": 0.5}\n", "m.jsonl", 0, options);
  EXPECT_EQ(only_run(out).run_id, "my-run");
  EXPECT_EQ(only_run(out).source.path, "m.jsonl");
}

}  // namespace
