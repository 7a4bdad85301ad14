// Per-sample readers: TRL's completions Parquet (plain and chat), verl's rollout dumps, folders in step order, and
// damaged input. Parquet files are written here with Arrow's own writer, as pandas would write them.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rldk/samples.h"
#include "test_support.h"

using rldk_test::TempDir;

namespace {

struct Collected {
  int64_t step;
  std::string prompt, completion, group;
  std::vector<double> rewards;
  double advantage;
};

class CollectingSink : public rldk::SampleSink {
 public:
  rldk::SampleSchema schema;
  std::vector<Collected> rows;
  void on_schema(const rldk::SampleSchema& s) override { schema = s; }
  void on_row(const rldk::SampleRow& r) override {
    rows.push_back({r.step, std::string(r.prompt), std::string(r.completion), std::string(r.group),
                    std::vector<double>(r.rewards, r.rewards + schema.rewards.size()), r.advantage});
  }
};

void write_parquet(const std::string& path, const std::shared_ptr<arrow::Table>& table) {
  auto out = arrow::io::FileOutputStream::Open(path);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, 2).ok());
  ASSERT_TRUE((*out)->Close().ok());
}

template <class Builder, class T>
std::shared_ptr<arrow::Array> column(const std::vector<T>& values) {
  Builder b;
  for (const auto& v : values) EXPECT_TRUE(b.Append(v).ok());
  std::shared_ptr<arrow::Array> a;
  EXPECT_TRUE(b.Finish(&a).ok());
  return a;
}

std::shared_ptr<arrow::Table> trl_table(int64_t step) {
  auto schema = arrow::schema({arrow::field("step", arrow::int64()), arrow::field("prompt", arrow::utf8()),
                               arrow::field("completion", arrow::utf8()), arrow::field("reward_len", arrow::float64()),
                               arrow::field("advantage", arrow::float64())});
  return arrow::Table::Make(schema, {column<arrow::Int64Builder, int64_t>({step, step, step}),
                                     column<arrow::StringBuilder, std::string>({"p1", "p1", "p2"}),
                                     column<arrow::StringBuilder, std::string>({"a b", "a b c", "x"}),
                                     column<arrow::DoubleBuilder, double>({0.2, 0.3, 0.1}),
                                     column<arrow::DoubleBuilder, double>({-0.5, 0.5, 0.0})});
}

}  // namespace

TEST(Samples, ReadsTrlCompletionsFolderInStepOrder) {
  TempDir dir;
  std::filesystem::create_directories(dir.path("out/completions"));
  write_parquet(dir.path("out/completions/completions_00010.parquet"), trl_table(10));
  write_parquet(dir.path("out/completions/completions_00002.parquet"), trl_table(2));
  CollectingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(rldk::read_samples(dir.path("out"), {}, sink, diagnostics).ok());
  EXPECT_EQ(sink.schema.format, "parquet (TRL completions)");
  ASSERT_EQ(sink.schema.rewards, std::vector<std::string>{"reward_len"});
  ASSERT_EQ(sink.rows.size(), 6u);
  EXPECT_EQ(sink.rows[0].step, 2);
  EXPECT_EQ(sink.rows[5].step, 10);
  EXPECT_EQ(sink.rows[1].completion, "a b c");
  EXPECT_EQ(sink.rows[1].group, "p1");  // GRPO groups: same step, same prompt
  EXPECT_DOUBLE_EQ(sink.rows[1].rewards[0], 0.3);
  EXPECT_DOUBLE_EQ(sink.rows[1].advantage, 0.5);
  EXPECT_TRUE(diagnostics.empty());
}

TEST(Samples, ReadsChatMessagesAsTheirContents) {
  TempDir dir;
  auto message = arrow::struct_({arrow::field("role", arrow::utf8()), arrow::field("content", arrow::utf8())});
  arrow::ListBuilder list(arrow::default_memory_pool(), std::make_shared<arrow::StructBuilder>(
      message, arrow::default_memory_pool(),
      std::vector<std::shared_ptr<arrow::ArrayBuilder>>{std::make_shared<arrow::StringBuilder>(),
                                                        std::make_shared<arrow::StringBuilder>()}));
  auto* msgs = static_cast<arrow::StructBuilder*>(list.value_builder());
  auto* role = static_cast<arrow::StringBuilder*>(msgs->field_builder(0));
  auto* content = static_cast<arrow::StringBuilder*>(msgs->field_builder(1));
  ASSERT_TRUE(list.Append().ok());
  ASSERT_TRUE(msgs->Append().ok() && role->Append("system").ok() && content->Append("be brief").ok());
  ASSERT_TRUE(msgs->Append().ok() && role->Append("user").ok() && content->Append("hi?").ok());
  std::shared_ptr<arrow::Array> prompts;
  ASSERT_TRUE(list.Finish(&prompts).ok());
  auto schema = arrow::schema({arrow::field("prompt", prompts->type()), arrow::field("completion", arrow::utf8()),
                               arrow::field("score", arrow::float32())});
  write_parquet(dir.path("chat.parquet"),
                arrow::Table::Make(schema, {prompts, column<arrow::StringBuilder, std::string>({"hello"}),
                                            column<arrow::FloatBuilder, float>({1.5f})}));
  CollectingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(rldk::read_samples(dir.path("chat.parquet"), {}, sink, diagnostics).ok());
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sink.rows[0].prompt, "be brief\nhi?");
  EXPECT_DOUBLE_EQ(sink.rows[0].rewards[0], 1.5);
}

TEST(Samples, ReadsVerlDumpsAndKeepsGoingPastBadLines) {
  TempDir dir;
  dir.write("rollouts/10.jsonl", "{\"input\": \"q\", \"output\": \"long answer\", \"gts\": \"4\", \"score\": 1.0, "
                                 "\"step\": 10, \"acc\": 1}\n");
  dir.write("rollouts/2.jsonl", "{\"input\": \"q\", \"output\": \"a\", \"gts\": \"4\", \"score\": 0.0, \"step\": 2, "
                                "\"acc\": 0}\n{broken\n{\"input\": \"q\", \"output\": \"b\", \"gts\": \"4\", "
                                "\"score\": 0.5, \"step\": 2, \"acc\": 0}\n");
  CollectingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(rldk::read_samples(dir.path("rollouts"), {}, sink, diagnostics).ok());
  EXPECT_EQ(sink.schema.format, "jsonl (verl rollout dump)");
  EXPECT_EQ(sink.schema.rewards, (std::vector<std::string>{"score", "acc"}));
  ASSERT_EQ(sink.rows.size(), 3u);
  EXPECT_EQ(sink.rows[0].step, 2);
  EXPECT_EQ(sink.rows[2].step, 10);
  EXPECT_EQ(sink.rows[2].completion, "long answer");
  EXPECT_EQ(diagnostics.counts().at("malformed_json"), 1u);
  EXPECT_EQ(diagnostics.examples().front().line, 2u);
}

TEST(Samples, SaysWhatIsMissingAndSurvivesDamage) {
  TempDir dir;
  CollectingSink sink;
  rldk::Diagnostics diagnostics;
  dir.write("no_completion.jsonl", "{\"prompt\": \"q\", \"reward\": 1}\n");
  auto missing = rldk::read_samples(dir.path("no_completion.jsonl"), {}, sink, diagnostics);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no completion column"), std::string::npos);
  dir.write("no_reward.jsonl", "{\"prompt\": \"q\", \"completion\": \"a\"}\n");
  auto no_reward = rldk::read_samples(dir.path("no_reward.jsonl"), {}, sink, diagnostics);
  ASSERT_FALSE(no_reward.ok());
  EXPECT_NE(no_reward.error().message.find("no reward column"), std::string::npos);
  // A mapped reward column is used even when it is not the only number.
  dir.write("mapped.jsonl", "{\"response\": \"a\", \"r1\": 1, \"r2\": 2}\n");
  rldk::SampleReadOptions mapped;
  mapped.columns.rewards = {"r2"};
  ASSERT_TRUE(rldk::read_samples(dir.path("mapped.jsonl"), mapped, sink, diagnostics).ok());
  EXPECT_EQ(sink.schema.rewards, std::vector<std::string>{"r2"});
  // A truncated Parquet file is an error with its path, not a crash.
  write_parquet(dir.path("whole.parquet"), trl_table(1));
  std::string bytes;
  {
    std::ifstream in(dir.path("whole.parquet"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  dir.write("cut.parquet", bytes.substr(0, bytes.size() / 2));
  auto cut = rldk::read_samples(dir.path("cut.parquet"), {}, sink, diagnostics);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().context, dir.path("cut.parquet"));
  EXPECT_FALSE(rldk::read_samples(dir.path("nothing_here"), {}, sink, diagnostics).ok());
}
