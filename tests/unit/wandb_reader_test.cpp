// W&B transaction logs through StreamReader: the LevelDB-log framing (blocks, chunks split across blocks, CRC-32),
// history rows with extended-JSON values, the step choice, config/summary/run meta, and damage reported with its
// byte offset. Records are encoded here from the .proto field numbers; real offline runs written by the wandb SDK
// are read in tests/python/test_binary_readers.py and the golden cases.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

using namespace rldk_test;

constexpr size_t BLOCK = 32768;

std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string bytes_field(uint32_t field, const std::string& body) {
  return varint((uint64_t{field} << 3) | 2) + varint(body.size()) + body;
}
std::string item(const std::string& key, const std::string& json) {
  return bytes_field(1, key) + bytes_field(16, json);
}
std::string history(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string body;
  for (const auto& [k, v] : items) body += bytes_field(1, item(k, v));
  return bytes_field(2, body);
}

// Writes records the way W&B does: the 7-byte header, then chunks in 32 KiB blocks.
class LogWriter {
 public:
  LogWriter() { out_ = std::string(":W&B\xE1\xBE\x00", 7); }
  void add(const std::string& record) {
    size_t pos = 0;
    bool first = true;
    do {
      size_t left = BLOCK - out_.size() % BLOCK;
      if (left < 7) {
        out_.append(left, '\0');
        left = BLOCK;
      }
      size_t n = std::min(record.size() - pos, left - 7);
      bool last = pos + n == record.size();
      uint8_t type = first && last ? 1 : first ? 2 : last ? 4 : 3;
      std::string payload = record.substr(pos, n);
      uLong crc = crc32(0L, Z_NULL, 0);
      crc = crc32(crc, &type, 1);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size()));
      auto crc32v = static_cast<uint32_t>(crc);
      out_.append(reinterpret_cast<const char*>(&crc32v), 4);
      out_.push_back(static_cast<char>(n & 0xFF));
      out_.push_back(static_cast<char>(n >> 8));
      out_.push_back(static_cast<char>(type));
      out_ += payload;
      pos += n;
      first = false;
    } while (pos < record.size());
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

std::string sample_log() {
  LogWriter w;
  // The run record carries the initial config, as wandb-core writes it.
  w.add(bytes_field(17, bytes_field(1, "abc123") + bytes_field(3, "proj") +
                            bytes_field(4, bytes_field(1, item("beta", "0.1"))) + bytes_field(8, "brisk-run-1")));
  w.add(bytes_field(5, bytes_field(1, item("lr", "1e-05")) + bytes_field(1, item("_wandb", "{}"))));
  const char* rewards[] = {"0.0", "1.5", "NaN", "Infinity", "-Infinity"};
  for (int i = 0; i < 5; ++i) {
    w.add(history({{"train/kl", std::to_string(0.1 * i)},
                   {"train/reward", rewards[i]},
                   {"train/global_step", std::to_string(10 * i)},
                   {"note", "\"text\""},
                   {"_step", std::to_string(i)},
                   {"_timestamp", std::to_string(1.7e9 + i)},
                   {"_runtime", "3.5"}}));
  }
  w.add(bytes_field(3, bytes_field(1, item("best", "3"))));
  w.add(bytes_field(18, varint(8) + varint(0)));
  return w.bytes();
}

void expect_sample(const ReadOutput& out) {
  ASSERT_EQ(out.runs.size(), 1u);
  const rldk::Run& run = out.runs.front();
  ASSERT_EQ(run.series.count("policy/kl"), 1u);
  ASSERT_EQ(run.series.count("reward/mean"), 1u);
  const rldk::Series& kl = run.series.at("policy/kl");
  const rldk::Series& reward = run.series.at("reward/mean");
  EXPECT_EQ(kl.steps, (std::vector<int64_t>{0, 10, 20, 30, 40}));  // the trainer's step, not _step
  EXPECT_EQ(kl.values[3], 0.3);
  EXPECT_EQ(kl.wall_times[1], 1.7e9 + 1);
  EXPECT_EQ(reward.values[1], 1.5);
  EXPECT_TRUE(std::isnan(reward.values[2]));
  EXPECT_EQ(reward.values[3], INF);
  EXPECT_EQ(reward.values[4], -INF);
  EXPECT_EQ(run.series.count("note"), 0u);           // strings are not values
  EXPECT_EQ(run.series.count("_runtime"), 0u);       // W&B bookkeeping
  EXPECT_EQ(run.series.count("train/global_step"), 0u);
}

TEST(WandbReader, ReadsHistoryConfigSummaryAndRun) {
  ReadOutput out = read_text(sample_log(), "wandb/offline-run-20240101_000000-abc123/run-abc123.wandb");
  EXPECT_EQ(out.format, rldk::Format::wandb);
  EXPECT_TRUE(out.diagnostics.empty()) << (out.diagnostics.empty() ? "" : to_string(out.diagnostics.examples()[0]));
  expect_sample(out);
  const auto& meta = out.runs.front().meta;
  EXPECT_EQ(meta.at("wandb_run_id"), "abc123");
  EXPECT_EQ(meta.at("wandb_project"), "proj");
  EXPECT_EQ(meta.at("wandb_display_name"), "brisk-run-1");
  EXPECT_EQ(meta.at("config.lr"), "1e-05");
  EXPECT_EQ(meta.at("config.beta"), "0.1");
  EXPECT_EQ(meta.count("config._wandb"), 0u);
  EXPECT_EQ(meta.at("summary.best"), "3");
  EXPECT_EQ(meta.at("wandb_exit_code"), "0");
  EXPECT_EQ(out.detail, "wandb (9 records, 5 history rows; step from train/global_step)");
}

TEST(WandbReader, WithoutATrainerStepUsesUnderscoreStep) {
  LogWriter w;
  for (int i = 0; i < 3; ++i) w.add(history({{"loss", std::to_string(1.0 / (i + 1))}, {"_step", std::to_string(i + 7)}}));
  ReadOutput out = read_text(w.bytes(), "run-x.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.begin()->second.steps, (std::vector<int64_t>{7, 8, 9}));
}

// TRL 0.9's PPOv2Trainer logs train/global_step = 0 with every row: once it stayed put while `_step` advanced over 3
// rows, `_step` is the step (rows before keep the trainer's value, except 0: no optimizer step yet, `_step` dates
// them). An evaluation row logged at the step of the training row before it is a repeat, not a stuck step.
TEST(WandbReader, ATrainerStepStuckAtItsFirstValueGivesWayToUnderscoreStep) {
  LogWriter stuck;
  for (int i = 0; i < 8; ++i) {
    stuck.add(history({{"objective/kl", std::to_string(0.1 * i)}, {"train/global_step", "0"}, {"_step", std::to_string(i)}}));
  }
  ReadOutput out = read_text(stuck.bytes(), "run-x.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("policy/kl_seq").steps, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(out.detail, "wandb (8 records, 8 history rows; step from _step (train/global_step stayed at 0))");

  LogWriter with_eval;
  with_eval.add(history({{"train/loss", "0.5"}, {"train/global_step", "10"}, {"_step", "0"}}));
  with_eval.add(history({{"eval/loss", "0.6"}, {"train/global_step", "10"}, {"_step", "1"}}));
  with_eval.add(history({{"train/loss", "0.4"}, {"train/global_step", "10"}, {"_step", "2"}}));
  with_eval.add(history({{"train/loss", "0.3"}, {"train/global_step", "20"}, {"_step", "3"}}));
  with_eval.add(history({{"train/loss", "0.2"}, {"train/global_step", "20"}, {"_step", "4"}}));
  with_eval.add(history({{"train/loss", "0.1"}, {"train/global_step", "20"}, {"_step", "5"}}));
  with_eval.add(history({{"train/loss", "0.1"}, {"train/global_step", "20"}, {"_step", "6"}}));
  out = read_text(with_eval.bytes(), "run-y.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("train/loss").steps, (std::vector<int64_t>{10, 10, 20, 20, 20, 20}));

  LogWriter evals_at_start;  // four evaluation sets before training, all at step 0: no stuck step
  for (int i = 0; i < 4; ++i) {
    evals_at_start.add(history({{"eval/loss", std::to_string(0.5 + 0.1 * i)}, {"train/global_step", "0"}, {"_step", std::to_string(i)}}));
  }
  for (int i = 1; i <= 3; ++i) {
    evals_at_start.add(history({{"train/loss", "0.4"}, {"train/global_step", std::to_string(10 * i)}, {"_step", std::to_string(3 + i)}}));
  }
  out = read_text(evals_at_start.bytes(), "run-e.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("eval/loss").steps, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(out.runs.front().series.at("train/loss").steps, (std::vector<int64_t>{10, 20, 30}));

  LogWriter stuck_at_one;  // stuck at a step other than 0: the rows before the switch keep it
  for (int i = 0; i < 5; ++i) {
    stuck_at_one.add(history({{"loss", std::to_string(0.1 * i)}, {"train/global_step", "1"}, {"_step", std::to_string(i)}}));
  }
  out = read_text(stuck_at_one.bytes(), "run-z.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("train/loss").steps, (std::vector<int64_t>{1, 1, 1, 3, 4}));
}

// A custom trainer logs its own "step" (outer iterations) with every row, and several training rows per value (the
// micro-batch updates of one iteration), with evaluation rows between: the rows are W&B's steps. A step that moves
// behind the `_step` its first rows were given, or repeats a metric once it moved, gives way to `_step`.
TEST(WandbReader, ATrainerStepThatRepeatsOverTrainingRowsGivesWayToUnderscoreStep) {
  LogWriter behind;  // 3 training rows at step 0 (dated by _step 0, 2, 4), then step 1
  int w = 0;
  for (int outer = 0; outer < 3; ++outer) {
    for (int row = 0; row < 3; ++row) {
      behind.add(history({{"train/loss", std::to_string(0.1 * w)}, {"step", std::to_string(outer)}, {"_step", std::to_string(w)}}));
      ++w;
      if (outer == 0) {
        behind.add(history({{"eval/reward", "0.5"}, {"step", "0"}, {"_step", std::to_string(w)}}));
        ++w;
      }
    }
  }
  ReadOutput out = read_text(behind.bytes(), "run-b.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("train/loss").steps, (std::vector<int64_t>{0, 2, 4, 6, 7, 8, 9, 10, 11}));
  // The evaluations between training rows dated by `_step` are dated with them.
  EXPECT_EQ(out.runs.front().series.at("eval/reward").steps, (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(out.detail, "wandb (12 records, 12 history rows; step from _step (step repeats over rows))");

  LogWriter repeats;  // step 0 once, then two rows at each step
  repeats.add(history({{"train/loss", "0.5"}, {"step", "0"}, {"_step", "0"}}));
  for (int i = 1; i < 7; ++i) {
    repeats.add(history({{"train/loss", "0.4"}, {"step", std::to_string((i + 1) / 2)}, {"_step", std::to_string(i)}}));
  }
  out = read_text(repeats.bytes(), "run-r.wandb");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("train/loss").steps, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(WandbReader, RecordsSplitAcrossBlocksAndAnyChunking) {
  LogWriter w;
  // A 70 KB record (a long string value) spans three blocks: FIRST, MIDDLE, LAST.
  w.add(history({{"big", "\"" + std::string(70000, 'x') + "\""}, {"custom_score", "0.25"}, {"_step", "0"}}));
  for (int i = 1; i < 2000; ++i) w.add(history({{"custom_score", std::to_string(i)}, {"_step", std::to_string(i)}}));
  ASSERT_GT(w.bytes().size(), 3 * BLOCK);
  for (size_t chunk : {size_t{0}, size_t{1000}, size_t{4093}}) {
    ReadOutput out = read_text(w.bytes(), "run-x.wandb", chunk);
    ASSERT_EQ(out.runs.size(), 1u);
    const rldk::Series& loss = out.runs.front().series.at("custom_score");
    ASSERT_EQ(loss.values.size(), 2000u);
    EXPECT_EQ(loss.values[0], 0.25);
    EXPECT_EQ(loss.values[1999], 1999.0);
    EXPECT_TRUE(out.diagnostics.empty());
  }
}

TEST(WandbReader, FlippedByteDropsTheRestOfItsBlockAndSaysWhere) {
  LogWriter w;
  for (int i = 0; i < 3000; ++i) w.add(history({{"custom_score", std::to_string(i)}, {"_step", std::to_string(i)}}));
  std::string file = w.bytes();
  file[100] ^= 0x20;  // inside an early chunk of block 0
  ReadOutput out = read_text(file, "run-x.wandb");
  ASSERT_EQ(out.diagnostics.counts().count("wandb_bad_chunk"), 1u);
  EXPECT_NE(out.diagnostics.examples().front().message.find("checksum mismatch"), std::string::npos);
  ASSERT_EQ(out.runs.size(), 1u);
  size_t kept = out.runs.front().series.at("custom_score").values.size();
  EXPECT_LT(kept, 3000u);
  EXPECT_GT(kept, 1500u);  // only block 0 is lost
}

TEST(WandbReader, TruncatedLogKeepsCompleteRecords) {
  std::string file = sample_log();
  ReadOutput out = read_text(file.substr(0, file.size() - 5), "run-x.wandb");
  EXPECT_EQ(out.diagnostics.counts().count("wandb_truncated"), 1u);
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.at("policy/kl").values.size(), 5u);
}

TEST(WandbReader, BadHeaderIsReported) {
  std::string file = sample_log();
  file[5] = 'x';
  ReadOutput out = read_text(file, "run-x.wandb", 0, [] {
    rldk::ReadOptions o;
    o.format = rldk::Format::wandb;
    return o;
  }());
  EXPECT_EQ(out.points, 0u);
  EXPECT_EQ(out.diagnostics.counts().at("wandb_bad_header"), 1u);
}

TEST(WandbReader, MalformedRecordBodyIsReportedAndSkipped) {
  LogWriter w;
  w.add(std::string("\x12\x7F\x01", 3));  // history with a length past the end
  w.add(history({{"loss", "1.0"}, {"_step", "1"}}));
  ReadOutput out = read_text(w.bytes(), "run-x.wandb");
  EXPECT_EQ(out.diagnostics.counts().at("wandb_bad_record"), 1u);
  EXPECT_EQ(out.points, 1u);
}

TEST(WandbReader, RandomDamageIsAlwaysReportedNeverACrash) {
  // A deterministic mutation run (the libFuzzer target explores further): flipped bytes, cuts and inserted
  // garbage, fed in random chunks. Damage never adds points, and points lost to damaged bytes always come with a diagnostic.
  const std::string clean = sample_log();
  const uint64_t clean_points = read_text(clean, "run-x.wandb").points;
  std::mt19937 rng(1234);
  for (int round = 0; round < 400; ++round) {
    std::string bad = clean;
    int kind = round % 3;
    size_t at = std::uniform_int_distribution<size_t>(0, bad.size() - 1)(rng);
    if (kind == 0) bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    else if (kind == 1) bad.resize(at);
    else bad.insert(at, std::string(1 + rng() % 20, static_cast<char>(rng())));
    ReadOutput out = read_text_random_chunks(bad, "run-x.wandb", static_cast<unsigned>(round), 50);
    ASSERT_LE(out.points, clean_points) << "round " << round;
    if (out.points < clean_points && kind != 1) {  // a cut at a record boundary is a shorter, valid file
      ASSERT_FALSE(out.diagnostics.empty()) << "round " << round << ": points lost silently";
    }
  }
}

}  // namespace
