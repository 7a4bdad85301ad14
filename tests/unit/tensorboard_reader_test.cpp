// TensorBoard event files through StreamReader: TFRecord framing, simple values and scalar tensors, incremental
// feeding, and damage (flipped bytes, truncation) reported with its location while the rest is still read.
// The events are encoded here by hand from the .proto field numbers; real files written by torch's SummaryWriter
// are read in tests/python/test_binary_readers.py and the golden cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/crc32c.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string tag_of(uint32_t field, uint32_t type) { return varint((uint64_t{field} << 3) | type); }
std::string bytes_field(uint32_t field, const std::string& body) { return tag_of(field, 2) + varint(body.size()) + body; }
template <class T>
std::string raw(T v) {
  std::string s(sizeof v, '\0');
  std::memcpy(s.data(), &v, sizeof v);
  return s;
}

std::string event(double wall_time, int64_t step, const std::string& summary) {
  return tag_of(1, 1) + raw(wall_time) + tag_of(2, 0) + varint(static_cast<uint64_t>(step)) + bytes_field(5, summary);
}
std::string simple_value(const std::string& tag, float v) {
  return bytes_field(1, bytes_field(1, tag) + tag_of(2, 5) + raw(v));
}
std::string scalars_metadata() { return bytes_field(9, bytes_field(1, bytes_field(1, "scalars"))); }
// torch's add_scalar(new_style=True): a DT_FLOAT tensor with one packed float_val, plugin metadata on the first.
std::string tensor_value(const std::string& tag, float v, bool with_metadata) {
  std::string tensor = tag_of(1, 0) + varint(1) + bytes_field(2, "") + bytes_field(5, raw(v));
  return bytes_field(1, bytes_field(1, tag) + (with_metadata ? scalars_metadata() : "") + bytes_field(8, tensor));
}
// TF's C++ writer: the number as raw tensor_content bytes.
std::string content_value(const std::string& tag, double v) {
  std::string tensor = tag_of(1, 0) + varint(2) + bytes_field(4, raw(v));
  return bytes_field(1, bytes_field(1, tag) + scalars_metadata() + bytes_field(8, tensor));
}

std::string frame(const std::string& data) {
  std::string length = raw(static_cast<uint64_t>(data.size()));
  return length + raw(rldk::io::masked_crc32c(length)) + data + raw(rldk::io::masked_crc32c(data));
}

std::string file_version_record() { return frame(tag_of(1, 1) + raw(1.7e9) + bytes_field(3, "brain.Event:2")); }

// Five steps of train/kl (simple values) and train/reward (tensors), one event per value, like torch writes them.
std::string sample_file() {
  std::string out = file_version_record();
  for (int step = 0; step < 5; ++step) {
    out += frame(event(1.7e9 + step, step, simple_value("train/kl", 0.1f * static_cast<float>(step))));
    float reward = step == 2 ? NAN : 1.5f * static_cast<float>(step);
    out += frame(event(1.7e9 + step, step, tensor_value("train/reward", reward, step == 0)));
  }
  return out;
}

const rldk::Series* series(const ReadOutput& out, const std::string& name) {
  if (out.runs.empty()) return nullptr;
  auto it = out.runs.front().series.find(name);
  return it == out.runs.front().series.end() ? nullptr : &it->second;
}

void expect_sample_values(const ReadOutput& out) {
  ASSERT_EQ(out.runs.size(), 1u);
  const rldk::Series* kl = series(out, "policy/kl");
  const rldk::Series* reward = series(out, "reward/mean");
  ASSERT_NE(kl, nullptr);
  ASSERT_NE(reward, nullptr);
  ASSERT_EQ(kl->values.size(), 5u);
  ASSERT_EQ(reward->values.size(), 5u);
  for (int step = 0; step < 5; ++step) {
    EXPECT_EQ(kl->steps[step], step);
    EXPECT_EQ(kl->values[step], static_cast<double>(0.1f * static_cast<float>(step)));
    EXPECT_EQ(kl->wall_times[step], 1.7e9 + step);
    double expected = step == 2 ? NaN : static_cast<double>(1.5f * static_cast<float>(step));
    EXPECT_TRUE(same_value(reward->values[step], expected)) << step;
  }
}

TEST(TensorBoardReader, ReadsSimpleValuesAndScalarTensors) {
  ReadOutput out = read_text(sample_file(), "logs/run1/events.out.tfevents.1700000000.host.1.0");
  EXPECT_EQ(out.format, rldk::Format::tensorboard);
  EXPECT_EQ(out.detail, "tensorboard (11 records; simple values, scalar tensors)");
  EXPECT_TRUE(out.diagnostics.empty());
  expect_sample_values(out);
  EXPECT_EQ(out.runs.front().meta.at("tensorboard_file_version"), "brain.Event:2");
}

TEST(TensorBoardReader, RecognisedByContentWithoutTheEventFileName) {
  ReadOutput out = read_text(sample_file(), "copy.bin");
  EXPECT_EQ(out.format, rldk::Format::tensorboard);
  expect_sample_values(out);
}

TEST(TensorBoardReader, AnyChunkingGivesTheSameResult) {
  std::string file = sample_file();
  for (size_t chunk : {1, 3, 11, 12, 13, 64}) {
    SCOPED_TRACE(chunk);
    ReadOutput out = read_text(file, "events.out.tfevents.1.h", chunk);
    EXPECT_TRUE(out.diagnostics.empty());
    expect_sample_values(out);
  }
  for (unsigned seed = 1; seed <= 5; ++seed) {
    ReadOutput out = read_text_random_chunks(file, "events.out.tfevents.1.h", seed, 40);
    expect_sample_values(out);
  }
}

TEST(TensorBoardReader, RawTensorContentAndLaterFieldOrder) {
  // The step written after the summary: fields may come in any order.
  std::string data = bytes_field(5, content_value("eval/score", 0.75)) + tag_of(2, 0) + varint(42) + tag_of(1, 1) +
                     raw(5.0);
  ReadOutput out = read_text(file_version_record() + frame(data), "events.out.tfevents.1.h");
  const rldk::Series* s = series(out, "eval/score");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->steps, std::vector<int64_t>{42});
  EXPECT_EQ(s->values, std::vector<double>{0.75});
  EXPECT_EQ(s->wall_times, std::vector<double>{5.0});
}

TEST(TensorBoardReader, TensorsOfOtherPluginsAreNotScalars) {
  std::string histogram_like = bytes_field(
      1, bytes_field(1, "weights") + bytes_field(9, bytes_field(1, bytes_field(1, "histograms"))) +
             bytes_field(8, tag_of(1, 0) + varint(1) + bytes_field(5, raw(1.0f))));
  ReadOutput out = read_text(file_version_record() + frame(event(1.0, 1, histogram_like)) +
                                 frame(event(1.0, 1, simple_value("loss", 2.0f))),
                             "events.out.tfevents.1.h");
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs.front().series.count("weights"), 0u);
  EXPECT_EQ(out.points, 1u);
}

TEST(TensorBoardReader, FlippedDataByteDropsOnlyThatRecord) {
  std::string file = sample_file();
  size_t second = file_version_record().size();  // record 2: train/kl at step 0
  file[second + 12 + 3] ^= 0x40;
  ReadOutput out = read_text(file, "events.out.tfevents.1.h");
  EXPECT_EQ(out.diagnostics.counts().at("tfrecord_bad_checksum"), 1u);
  EXPECT_EQ(out.diagnostics.examples().front().message.rfind("record 2 at byte " + std::to_string(second), 0), 0u)
      << out.diagnostics.examples().front().message;
  EXPECT_EQ(out.points, 9u);
}

TEST(TensorBoardReader, FlippedHeaderByteResynchronisesAtTheNextRecord) {
  std::string file = sample_file();
  size_t second = file_version_record().size();
  file[second + 2] ^= 0x01;  // the length of record 2: its checksum no longer matches
  ReadOutput out = read_text(file, "events.out.tfevents.1.h", 7);
  ASSERT_EQ(out.diagnostics.counts().count("tfrecord_bad_header"), 1u);
  EXPECT_NE(out.diagnostics.examples().front().message.find("byte " + std::to_string(second)), std::string::npos);
  EXPECT_EQ(out.points, 9u);  // every record after the damaged one
}

TEST(TensorBoardReader, TruncatedFileKeepsTheCompleteRecordsAndSaysWhereItEnds) {
  std::string file = sample_file();
  for (size_t cut : {file.size() - 1, file.size() - 20, size_t{5}}) {
    SCOPED_TRACE(cut);
    ReadOutput out = read_text(file.substr(0, cut), "events.out.tfevents.1.h");
    EXPECT_EQ(out.diagnostics.counts().count("tfrecord_truncated"), 1u);
    EXPECT_NE(out.diagnostics.examples().front().message.find("incomplete last record"), std::string::npos);
  }
}

// A run resumed into its log dir (a trainer's resume_from_checkpoint) writes a second event file there: the log dir
// is one run, its files read oldest first, the step going back at the resume a restart, a first file cut mid-record
// reported against that file without losing the second.
TEST(TensorBoardReader, ALogDirWithSeveralEventFilesIsOneRun) {
  TempDir dir;
  std::string first = file_version_record(), second = file_version_record();
  for (int step = 1; step <= 10; ++step) {
    first += frame(event(1.7e9 + step, step, simple_value("train/kl", 0.01f * static_cast<float>(step))));
  }
  for (int step = 8; step <= 20; ++step) {
    second += frame(event(1.8e9 + step, step, simple_value("train/kl", 0.02f * static_cast<float>(step))));
  }
  std::string cut = first + frame(event(1.7e9, 11, simple_value("train/kl", 9.0f))).substr(0, 7);
  dir.write("runs/exp/events.out.tfevents.1700000000.host.1.0", cut);
  dir.write("runs/exp/events.out.tfevents.1800000000.host.2.0", second);
  dir.write("runs/other/events.out.tfevents.1700000000.host.3.0", first);
  auto runs = rldk::read_runs(dir.path("runs"));
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 2u);
  const rldk::Run& exp = runs->at(0);
  EXPECT_EQ(exp.run_id, "exp");
  EXPECT_EQ(exp.source.path, dir.path("runs/exp"));
  const rldk::Series* kl = exp.find("policy/kl");
  ASSERT_NE(kl, nullptr);
  ASSERT_EQ(kl->size(), 23u);
  EXPECT_EQ(kl->steps[10], 8);
  EXPECT_EQ(exp.segments.size(), 2u);
  ASSERT_EQ(exp.diagnostics.counts().count("tfrecord_truncated"), 1u);
  EXPECT_EQ(exp.diagnostics.examples().front().file, dir.path("runs/exp/events.out.tfevents.1700000000.host.1.0"));
  EXPECT_EQ(runs->at(1).run_id, "other");
  EXPECT_EQ(runs->at(1).find("policy/kl")->size(), 10u);
}

// add_scalars("rollout/reward", {"mean": m, "std": s}) writes each key into a subfolder of the log dir,
// rollout_reward_mean/ and rollout_reward_std/, under the one tag "rollout/reward": they are the run's
// rollout/reward/mean and /std. A subfolder whose tag its name does not spell (an eval writer) is a run of its own.
TEST(TensorBoardReader, AddScalarsSubfoldersArePartOfTheirLogDirsRun) {
  TempDir dir;
  auto file_of = [](const std::string& tag, float scale) {
    std::string out = file_version_record();
    for (int step = 1; step <= 5; ++step) {
      out += frame(event(1.7e9 + step, step, simple_value(tag, scale * static_cast<float>(step))));
    }
    return out;
  };
  dir.write("runs/exp/events.out.tfevents.1700000000.host.1.0", file_of("train/loss", 1.0f));
  dir.write("runs/exp/rollout_reward_mean/events.out.tfevents.1700000000.host.1.1", file_of("rollout/reward", 0.5f));
  dir.write("runs/exp/rollout_reward_std/events.out.tfevents.1700000000.host.1.2", file_of("rollout/reward", 0.25f));
  dir.write("runs/exp/eval/events.out.tfevents.1700000000.host.1.3", file_of("eval/loss", 2.0f));
  auto runs = rldk::read_runs(dir.path("runs"));
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 2u);
  const rldk::Run& exp = runs->at(0);
  EXPECT_EQ(exp.run_id, "exp");
  EXPECT_TRUE(has_series(exp, "reward/mean", {1, 2, 3, 4, 5}, {0.5, 1.0, 1.5, 2.0, 2.5}));
  EXPECT_TRUE(has_series(exp, "reward/std", {1, 2, 3, 4, 5}, {0.25, 0.5, 0.75, 1.0, 1.25}));
  EXPECT_NE(exp.find("train/loss"), nullptr);
  EXPECT_EQ(exp.segments.size(), 1u);
  EXPECT_EQ(runs->at(1).run_id, "eval");
  EXPECT_NE(runs->at(1).find("eval/loss"), nullptr);
}

// A Trainer's output_dir with report_to="tensorboard": the log is in runs/<date>_<host>/ and again in
// trainer_state.json (top level and per checkpoint). That is one run, the events'; a state file with no log dir
// beside it is the run.
TEST(TensorBoardReader, ATrainersOutputDirIsOneRunItsEvents) {
  TempDir dir;
  std::string events = file_version_record();
  for (int step = 1; step <= 12; ++step) {
    events += frame(event(1.7e9 + step, step, simple_value("train/kl", 0.01f * static_cast<float>(step))));
  }
  std::string state = R"({"log_history": [{"step": 5, "kl": 0.05}, {"step": 10, "kl": 0.1}]})";
  dir.write("out/runs/Nov28_08-00-00_host/events.out.tfevents.1700000000.host.1.0", events);
  dir.write("out/checkpoint-10/trainer_state.json", state);
  dir.write("out/trainer_state.json", state);
  dir.write("other/checkpoint-10/trainer_state.json", state);
  auto runs = rldk::read_runs(dir.path(""));
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ(runs->at(0).run_id, "other");
  EXPECT_EQ(runs->at(0).find("policy/kl")->size(), 2u);
  EXPECT_EQ(runs->at(1).run_id, "Nov28_08-00-00_host");
  EXPECT_EQ(runs->at(1).find("policy/kl")->size(), 12u);
  // rldk's trainer callback keeps the log a third time, canonical and complete: then that is the run.
  dir.write("out/rldk/metrics.jsonl", R"({"step": 1, "name": "policy/kl", "value": 0.01})" "\n");
  dir.write("out/rldk/report.json", "{}");
  auto with_callback = rldk::read_runs(dir.path("out"));
  ASSERT_TRUE(with_callback.ok()) << rldk::to_string(with_callback.error());
  ASSERT_EQ(with_callback->size(), 1u);
  EXPECT_EQ(with_callback->at(0).source.path, dir.path("out/rldk/metrics.jsonl"));
}

TEST(TensorBoardReader, GarbageAfterTheNameIsReportedNotCrashed) {
  std::string garbage(1000, '\x5A');
  ReadOutput out = read_text(garbage, "events.out.tfevents.1.h");
  EXPECT_EQ(out.format, rldk::Format::tensorboard);
  EXPECT_EQ(out.points, 0u);
  EXPECT_EQ(out.diagnostics.counts().at("tfrecord_bad_header"), 1u);
}

TEST(TensorBoardReader, TextLogsAreStillText) {
  ReadOutput out = read_text("{\"step\": 1, \"loss\": 0.5}\n", "metrics.jsonl");
  EXPECT_EQ(out.format, rldk::Format::jsonl);
  ReadOutput shorter = read_text("a=1\n", "x.log");
  EXPECT_EQ(shorter.format, rldk::Format::console);
}

TEST(TensorBoardReader, AShortFirstTextLineIsReadWithoutWaitingForMoreBytes) {
  // A live console stream whose first line is shorter than the binary sniffing window.
  rldk::RunBuilder builder;
  rldk::Diagnostics diagnostics;
  rldk::ReadOptions options;
  options.run_id = "run";
  rldk::StreamReader reader(rldk::SourceInfo{"train.log", "", ""}, options, builder, diagnostics);
  reader.feed("loss=1\n");
  EXPECT_EQ(reader.format(), rldk::Format::console);
  EXPECT_EQ(reader.lines(), 1u);
  // The same bytes under an event file's name wait: they may be the start of a record.
  rldk::StreamReader event_reader(rldk::SourceInfo{"events.out.tfevents.1.h", "", ""}, options, builder, diagnostics);
  event_reader.feed("loss=1\n");
  EXPECT_EQ(event_reader.format(), rldk::Format::unknown);
}

TEST(TensorBoardReader, RandomDamageIsAlwaysReportedNeverACrash) {
  // A deterministic mutation run (the libFuzzer target explores further): flipped bytes, cuts and inserted
  // garbage, fed in random chunks. Damage never adds points, and points lost to damaged bytes always come with a diagnostic.
  const std::string clean = sample_file();
  const uint64_t clean_points = read_text(clean, "events.out.tfevents.1.h").points;
  std::mt19937 rng(1234);
  for (int round = 0; round < 400; ++round) {
    std::string bad = clean;
    int kind = round % 3;
    size_t at = std::uniform_int_distribution<size_t>(0, bad.size() - 1)(rng);
    if (kind == 0) bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    else if (kind == 1) bad.resize(at);
    else bad.insert(at, std::string(1 + rng() % 20, static_cast<char>(rng())));
    ReadOutput out = read_text_random_chunks(bad, "events.out.tfevents.1.h", static_cast<unsigned>(round), 50);
    ASSERT_LE(out.points, clean_points) << "round " << round;
    if (out.points < clean_points && kind != 1) {  // a cut at a record boundary is a shorter, valid file
      ASSERT_FALSE(out.diagnostics.empty()) << "round " << round << ": points lost silently";
    }
  }
}

}  // namespace
