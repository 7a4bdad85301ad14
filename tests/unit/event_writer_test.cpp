// EventWriter (include/rldk/event_writer.h): the exact line format, reading lines back, and concurrent writers.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/lenient_json.h"
#include "rldk/event_writer.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

std::vector<std::string> lines_of_file(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(EventWriterFormat, ExactLines) {
  struct Case {
    const char* name;
    rldk::Event event;
    std::string line;
  };
  rldk::Event full;
  full.step = 12;
  full.name = "policy/kl";
  full.value = 0.123;
  full.wall_time = 1767225600.0;
  full.run_id = "r1";
  rldk::Event tagged;
  tagged.step = -3;
  tagged.name = "a\"b";
  tagged.value = NaN;
  tagged.tags = {{"phase", "train"}, {"b", "2"}};
  tagged.meta = {{"host", "n\n1"}};
  rldk::Event bare;
  bare.name = "x";
  bare.value = -INF;
  rldk::Event big;
  big.step = 9007199254740992;
  big.name = "y";
  big.value = 1e-300;
  big.wall_time = 0.5;
  for (const Case& c : {
           Case{"documented_example", full,
                R"({"name":"policy/kl","run_id":"r1","step":12,"time":"2026-01-01T00:00:00.000Z","value":0.123})"},
           Case{"tags_meta_escapes_nan", tagged,
                R"({"meta":{"host":"n\n1"},"name":"a\"b","step":-3,"tags":{"b":"2","phase":"train"},"value":NaN})"},
           Case{"no_time_no_run", bare, R"({"name":"x","step":0,"value":-Infinity})"},
           Case{"large_step_tiny_value", big,
                R"({"name":"y","step":9007199254740992,"time":"1970-01-01T00:00:00.500Z","value":1e-300})"},
       }) {
    EXPECT_EQ(rldk::EventWriter::format_line(c.event), c.line) << c.name;
  }
}

TEST(EventWriter, LinesReadBackWithTheSameValues) {
  TempDir dir;
  std::string path = dir.path("logs/run/events.jsonl");  // parent folders are created
  const std::vector<double> values = {0.1, -2.5, 1e-300, 1.7976931348623157e308, 123456789.123456789,
                                      NaN, INF, -INF, 0.0, 1.0 / 3.0};
  {
    auto writer = rldk::EventWriter::open(path, "r1");
    ASSERT_TRUE(writer.ok()) << rldk::to_string(writer.error());
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_TRUE(writer.value()->log(static_cast<int64_t>(i), "policy/kl", values[i]).ok());
    }
    rldk::Event e;
    e.step = 100;
    e.name = "reward";
    e.value = 0.75;
    e.wall_time = 1704067200.25;
    e.run_id = "r1";
    e.tags = {{"split", "train"}};
    ASSERT_TRUE(writer.value()->log(e).ok());
    ASSERT_TRUE(writer.value()->log_metrics(101, {{"reward", NaN}, {"kl", 0.5}}).ok());
    ASSERT_TRUE(writer.value()->close().ok());
  }
  EXPECT_EQ(lines_of_file(path).size(), values.size() + 3);
  auto runs = rldk::read_runs(path);
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 1u);
  const rldk::Run& run = runs->front();
  EXPECT_EQ(run.run_id, "r1");
  EXPECT_TRUE(run.diagnostics.empty());
  std::vector<int64_t> steps;
  std::vector<double> expected_values = values;
  for (size_t i = 0; i < values.size(); ++i) steps.push_back(static_cast<int64_t>(i));
  steps.push_back(101);
  expected_values.push_back(0.5);
  EXPECT_TRUE(has_series(run, "policy/kl", steps, expected_values));
  // Exact round trip, bit for bit (the shortest round-trip form).
  const rldk::Series& kl = *run.find("policy/kl");
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) {
      EXPECT_EQ(kl.values[i], values[i]) << i;
    }
  }
  EXPECT_TRUE(has_series(run, "reward/mean", {100, 101}, {0.75, NaN}));
  const rldk::Series& reward = *run.find("reward/mean");
  EXPECT_NEAR(reward.wall_times[0], 1704067200.25, 1e-6);
  // Events without a time are stamped with the current time.
  EXPECT_TRUE(std::isfinite(kl.wall_times[0]));
  EXPECT_GT(kl.wall_times[0], 1.7e9);
  // log_metrics stamps all metrics of a step with one time.
  EXPECT_EQ(reward.wall_times[1], kl.wall_times.back());
}

TEST(EventWriter, AppendOrTruncate) {
  TempDir dir;
  std::string path = dir.path("e.jsonl");
  for (int i = 0; i < 2; ++i) {
    auto writer = rldk::EventWriter::open(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer.value()->log(i, "loss", 1.0).ok());
  }
  EXPECT_EQ(lines_of_file(path).size(), 2u);
  {
    auto writer = rldk::EventWriter::open(path, "", /*append=*/false);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer.value()->log(7, "loss", 2.0).ok());
  }
  auto lines = lines_of_file(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"step\":7"), std::string::npos);
  EXPECT_EQ(lines[0].find("run_id"), std::string::npos);  // no run id: omitted
}

TEST(EventWriter, Errors) {
  TempDir dir;
  auto bad = rldk::EventWriter::open(dir.path());  // a directory
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(static_cast<int>(bad.error().code), static_cast<int>(rldk::ErrorCode::io));

  auto writer = rldk::EventWriter::open(dir.path("e.jsonl"));
  ASSERT_TRUE(writer.ok());
  auto empty_name = writer.value()->log(1, "", 1.0);
  ASSERT_FALSE(empty_name.ok());
  EXPECT_EQ(static_cast<int>(empty_name.error().code), static_cast<int>(rldk::ErrorCode::invalid_argument));
  auto empty_metric = writer.value()->log_metrics(1, {{"ok", 1.0}, {"", 2.0}});
  ASSERT_FALSE(empty_metric.ok());
  ASSERT_TRUE(writer.value()->close().ok());
  auto closed = writer.value()->log(1, "loss", 1.0);
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(static_cast<int>(closed.error().code), static_cast<int>(rldk::ErrorCode::io));
  EXPECT_TRUE(writer.value()->close().ok());  // closing twice is harmless
  // Nothing half-written: the failed calls left the file empty.
  EXPECT_TRUE(read_file(dir.path("e.jsonl")).empty());
}

TEST(EventWriter, ConcurrentWritersProduceWholeLines) {
  TempDir dir;
  std::string path = dir.path("threads.jsonl");
  constexpr int THREADS = 8;
  constexpr int EVENTS = 1000;
  {
    auto writer = rldk::EventWriter::open(path, "mt");
    ASSERT_TRUE(writer.ok());
    rldk::EventWriter& w = *writer.value();
    std::vector<std::thread> threads;
    for (int t = 0; t < THREADS; ++t) {
      threads.emplace_back([&w, t] {
        std::string name = "thread/" + std::to_string(t) + "/" + std::string(200, 'x');  // long lines
        for (int i = 0; i < EVENTS; ++i) {
          if (!w.log(i, name, i * 0.5 + t).ok()) ADD_FAILURE() << "log failed";
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  auto lines = lines_of_file(path);
  ASSERT_EQ(lines.size(), static_cast<size_t>(THREADS * EVENTS));
  std::set<std::pair<std::string, int64_t>> seen;
  rldk::io::FlatRecord record;
  for (const auto& line : lines) {
    rldk::io::ParseError error;
    ASSERT_TRUE(rldk::io::parse_flat_object(line, record, error)) << line << ": " << error.message;
    std::string name;
    double step = -1, value = -1;
    for (const auto& f : record.fields) {
      if (record.key(f) == "name") name = std::string(record.str(f));
      if (record.key(f) == "step") step = f.number;
      if (record.key(f) == "value") value = f.number;
    }
    ASSERT_TRUE(seen.emplace(name, static_cast<int64_t>(step)).second) << "duplicate " << line;
    int t = std::stoi(name.substr(7));
    EXPECT_EQ(value, step * 0.5 + t) << line;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(THREADS * EVENTS));
  // And the reader sees every event.
  auto runs = rldk::read_runs(path);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->front().point_count(), static_cast<uint64_t>(THREADS * EVENTS));
  EXPECT_EQ(runs->front().series.size(), static_cast<size_t>(THREADS));
  EXPECT_TRUE(runs->front().diagnostics.empty());
}

}  // namespace
