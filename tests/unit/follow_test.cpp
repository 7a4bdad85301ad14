// Live sources on real files, directories and pipes: a writer (often a thread) changes a file the way trainers and
// log rotation do, and the follower must report the same bytes in order, with the right events, quickly.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "io/follow_notify.h"
#include "rldk/follow.h"
#include "test_support.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using rldk::FollowEvent;
using rldk::FollowEventKind;
using rldk_test::TempDir;

// Records events as strings ("appeared", "data:<bytes>", "switched:<file name>"), merging consecutive data.
struct Recorder {
  std::vector<std::string> events;
  std::string data;  // every data byte, in order
  size_t max_chunk = 0;

  rldk::FollowCallback callback() {
    return [this](const FollowEvent& e) {
      if (e.kind == FollowEventKind::data) {
        data.append(e.bytes);
        max_chunk = std::max(max_chunk, e.bytes.size());
        if (!events.empty() && events.back().rfind("data:", 0) == 0) {
          events.back().append(e.bytes);
        } else {
          events.push_back("data:" + std::string(e.bytes));
        }
        return;
      }
      std::string name(rldk::follow_event_name(e.kind));
      if (e.kind == FollowEventKind::switched) {
        name += ":" + std::filesystem::path(std::string(e.path)).filename().string();
      }
      events.push_back(name);
    };
  }
  bool has(const std::string& event) const { return std::find(events.begin(), events.end(), event) != events.end(); }
  std::string joined() const {
    std::string out;
    for (const auto& e : events) out += "[" + e + "]";
    return out;
  }
};

// Calls read_new() and waits as the source suggests until `done` holds or `timeout` passes.
template <class Source>
bool pump_until(Source& source, Recorder& recorder, const std::function<bool()>& done,
                std::chrono::milliseconds timeout = 2000ms) {
  auto deadline = Clock::now() + timeout;
  auto callback = recorder.callback();
  for (;;) {
    auto progress = source.read_new(callback);
    EXPECT_TRUE(progress.ok()) << (progress.ok() ? "" : rldk::to_string(progress.error()));
    if (!progress.ok()) return false;
    if (done()) return true;
    auto now = Clock::now();
    if (now >= deadline) return false;
    if (progress->more) continue;
    source.wait(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1);
  }
}

void append(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

void overwrite(const std::string& path, const std::string& bytes) {  // like open(path, "w") in Python
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

void set_mtime(const std::string& path, int64_t seconds) {
  timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// Options for the scenario tests. With inotify the safety interval is set far beyond the test's timeout, so a
// scenario passes only if inotify itself woke the loop.
rldk::FollowOptions mode_options(bool inotify) {
  rldk::FollowOptions o;
  o.use_inotify = inotify;
  o.inotify_check_interval_ms = 60'000;
  o.poll_interval_ms = 20;
  return o;
}

rldk::FileFollower open_follower(const std::string& path, const rldk::FollowOptions& options) {
  auto f = rldk::FileFollower::open(path, options);
  EXPECT_TRUE(f.ok());
  return std::move(f.value());
}

// ---------------------------------------------------------------------------------------------------------------
// FileFollower, in both modes: inotify and the polling fallback.

class FollowScenario : public ::testing::TestWithParam<bool> {
 protected:
  bool inotify() const { return GetParam(); }
  rldk::FollowOptions options() const { return mode_options(inotify()); }
};

TEST_P(FollowScenario, ModeIsAsAsked) {
  TempDir dir;
  auto f = open_follower(dir.path("run.jsonl"), options());
  if (inotify()) {
    EXPECT_GE(f.poll_fd(), 0);
    EXPECT_EQ(f.suggested_timeout_ms(), 60'000);
  } else {
    EXPECT_EQ(f.poll_fd(), -1);
    EXPECT_EQ(f.suggested_timeout_ms(), 20);
  }
}

TEST_P(FollowScenario, FileThatAppearsLate) {
  TempDir dir;
  std::string path = dir.path("late.jsonl");
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(f.read_new(r.callback()).ok());
  EXPECT_TRUE(r.events.empty());
  EXPECT_FALSE(f.is_open());
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    append(path, "{\"step\": 1}\n");
  });
  EXPECT_TRUE(pump_until(f, r, [&] { return r.data == "{\"step\": 1}\n"; })) << r.joined();
  writer.join();
  ASSERT_EQ(r.events.size(), 2u) << r.joined();
  EXPECT_EQ(r.events[0], "appeared");
  EXPECT_EQ(r.events[1], "data:{\"step\": 1}\n");
}

TEST_P(FollowScenario, DirectoryThatAppearsLate) {
  TempDir dir;
  std::string path = dir.path("logs/run/metrics.jsonl");
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(f.read_new(r.callback()).ok());
  // No directory to watch yet: poll at the short interval meanwhile.
  EXPECT_EQ(f.suggested_timeout_ms(), 20);
  std::filesystem::create_directories(dir.path("logs/run"));
  append(path, "a\n");
  EXPECT_TRUE(pump_until(f, r, [&] { return r.data == "a\n"; })) << r.joined();
  EXPECT_EQ(r.events.front(), "appeared");
}

TEST_P(FollowScenario, TruncationRestartsAtZero) {
  TempDir dir;
  std::string path = dir.write("run.log", "line 1\nline 2\n");
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "line 1\nline 2\n"; }));
  overwrite(path, "new 1\n");  // shorter than what was read: detectable as truncation
  ASSERT_TRUE(pump_until(f, r, [&] { return r.has("data:new 1\n"); })) << r.joined();
  ASSERT_EQ(r.events.size(), 4u) << r.joined();
  EXPECT_EQ(r.events[2], "truncated");
  EXPECT_EQ(f.offset(), 6u);
}

TEST_P(FollowScenario, ReplacementFinishesOldFileFirst) {
  TempDir dir;
  std::string path = dir.write("metrics.jsonl", "old 1\n");
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "old 1\n"; }));
  // The old file gets one more line nobody has read yet, then a new file is renamed over it (logrotate, verl).
  int old_fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(old_fd, 0);
  ASSERT_EQ(::write(old_fd, "old 2\n", 6), 6);
  std::string fresh = dir.write("metrics.jsonl.tmp", "new 1\n");
  ASSERT_EQ(std::rename(fresh.c_str(), path.c_str()), 0);
  ASSERT_TRUE(pump_until(f, r, [&] { return r.has("data:new 1\n"); })) << r.joined();
  EXPECT_EQ(r.joined(), "[appeared][data:old 1\nold 2\n][replaced][data:new 1\n]");
  // Writes to the old file after the switch are not mixed into the new one.
  ASSERT_EQ(::write(old_fd, "old 3\n", 6), 6);
  ::close(old_fd);
  append(path, "new 2\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data.find("new 2\n") != std::string::npos; })) << r.joined();
  EXPECT_EQ(r.data, "old 1\nold 2\nnew 1\nnew 2\n");
}

TEST_P(FollowScenario, DeleteAndRecreateIsAReplacement) {
  TempDir dir;
  std::string path = dir.write("run.jsonl", "a\n");
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "a\n"; }));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_TRUE(pump_until(f, r, [&] { return r.has("vanished"); })) << r.joined();
  append(path, "b\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "a\nb\n"; })) << r.joined();
  EXPECT_EQ(r.joined(), "[appeared][data:a\n][vanished][replaced][data:b\n]");
}

TEST_P(FollowScenario, DirectoryDeletedAndRecreated) {
  TempDir dir;
  std::string path = dir.write("run/metrics.jsonl", "1\n");
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n"; }));
  std::filesystem::remove_all(dir.path("run"));
  ASSERT_TRUE(pump_until(f, r, [&] { return r.has("vanished"); })) << r.joined();
  dir.write("run/metrics.jsonl", "2\n");  // a restarted trainer recreates its run directory
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n2\n"; })) << r.joined();
  EXPECT_EQ(r.joined(), "[appeared][data:1\n][vanished][replaced][data:2\n]");
  if (inotify()) {
    EXPECT_EQ(f.suggested_timeout_ms(), 60'000);  // watching the new directory
  }
}

TEST_P(FollowScenario, UnlinkedFileStillWrittenIsStillRead) {
  TempDir dir;
  std::string path = dir.write("run.log", "1\n");
  int writer = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  auto f = open_follower(path, options());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n"; }));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::write(writer, "2\n", 2), 2);  // the trainer keeps its descriptor and keeps logging
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n2\n" && r.has("vanished"); })) << r.joined();
  ::close(writer);
}

TEST_P(FollowScenario, WriterThreadLinesArriveInOrder) {
  TempDir dir;
  std::string path = dir.path("stream.jsonl");
  auto f = open_follower(path, options());
  constexpr int LINES = 40;
  std::string expected;
  for (int i = 0; i < LINES; ++i) expected += "{\"step\": " + std::to_string(i) + ", \"loss\": 0.5}\n";
  std::thread writer([&] {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    for (int i = 0; i < LINES; ++i) {
      std::string line = "{\"step\": " + std::to_string(i) + ", \"loss\": 0.5}\n";
      // Half lines too: the follower hands over raw bytes, StreamReader joins them.
      size_t half = line.size() / 2;
      (void)!::write(fd, line.data(), half);
      if (i % 5 == 0) std::this_thread::sleep_for(2ms);
      (void)!::write(fd, line.data() + half, line.size() - half);
      std::this_thread::sleep_for(3ms);
    }
    ::close(fd);
  });
  Recorder r;
  EXPECT_TRUE(pump_until(f, r, [&] { return r.data.size() >= expected.size(); }, 2500ms));
  writer.join();
  EXPECT_EQ(r.data, expected);
  // And the bytes parse as the same run as the whole file read at once.
  auto streamed = rldk_test::read_text_random_chunks(r.data, "stream.jsonl", 7, 13);
  auto whole = rldk_test::read_text(expected, "stream.jsonl");
  ASSERT_EQ(streamed.runs.size(), 1u);
  EXPECT_TRUE(rldk_test::same_run(streamed.runs[0], whole.runs[0]));
}

INSTANTIATE_TEST_SUITE_P(Follow, FollowScenario, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "inotify" : "polling"; });

// ---------------------------------------------------------------------------------------------------------------
// FileFollower: latency, chunking, options, errors.

// Writes lines from a thread with pauses and measures, per line, the time from write() returning to the line
// reaching the callback through a poll(2) loop on poll_fd().
TEST(FollowLatency, InotifyDeliversWithinMilliseconds) {
  TempDir dir;
  std::string path = dir.write("live.jsonl", "");
  auto f = open_follower(path, mode_options(true));
  ASSERT_GE(f.poll_fd(), 0) << "inotify unavailable";
  constexpr int LINES = 30;
  std::vector<Clock::time_point> written(LINES), received(LINES);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    for (int i = 0; i < LINES; ++i) {
      std::this_thread::sleep_for(10ms);
      std::string line = "{\"step\": " + std::to_string(i) + "}\n";
      written[i] = Clock::now();
      (void)!::write(fd, line.data(), line.size());
    }
    ::close(fd);
    done = true;
  });
  int lines = 0;
  auto deadline = Clock::now() + 3s;
  auto callback = [&](const FollowEvent& e) {
    if (e.kind != FollowEventKind::data) return;
    auto now = Clock::now();
    for (char c : e.bytes) {
      if (c == '\n' && lines < LINES) received[lines++] = now;
    }
  };
  while (lines < LINES && Clock::now() < deadline) {
    pollfd p{f.poll_fd(), POLLIN, 0};
    ::poll(&p, 1, 200);
    ASSERT_TRUE(f.read_new(callback).ok());
  }
  writer.join();
  ASSERT_EQ(lines, LINES);
  std::vector<double> latency_ms;
  for (int i = 0; i < LINES; ++i) {
    latency_ms.push_back(std::max(0.0, std::chrono::duration<double, std::milli>(received[i] - written[i]).count()));
  }
  std::sort(latency_ms.begin(), latency_ms.end());
  double median = latency_ms[LINES / 2], worst = latency_ms.back();
  std::printf("[ latency  ] inotify delivery over %d lines: median %.3f ms, max %.3f ms\n", LINES, median, worst);
  RecordProperty("median_latency_us", static_cast<int>(median * 1000));
  RecordProperty("max_latency_us", static_cast<int>(worst * 1000));
  EXPECT_LT(worst, 50.0);
}

TEST(FollowChunks, BoundedChunksAndBudget) {
  TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 300'000; ++i) text += "{\"step\": " + std::to_string(i) + ", \"x\": 1.25}\n";
  std::string path = dir.write("big.jsonl", text);
  rldk::FollowOptions o;
  o.chunk_bytes = 4096;
  o.max_bytes_per_call = 65536;
  auto f = open_follower(path, o);
  Recorder r;
  int calls = 0;
  for (;;) {
    auto p = f.read_new(r.callback());
    ASSERT_TRUE(p.ok());
    ++calls;
    EXPECT_LE(p->bytes, o.max_bytes_per_call);
    if (!p->more) break;
  }
  EXPECT_EQ(r.data, text);
  EXPECT_LE(r.max_chunk, o.chunk_bytes);
  EXPECT_EQ(calls, static_cast<int>((text.size() + o.max_bytes_per_call - 1) / o.max_bytes_per_call) +
                       (text.size() % o.max_bytes_per_call == 0 ? 1 : 0));
}

TEST(FollowOptionsTest, StartAtEndSkipsExistingContentOnly) {
  TempDir dir;
  std::string path = dir.write("run.jsonl", "old\n");
  rldk::FollowOptions o = mode_options(true);
  o.start_at_end = true;
  auto f = open_follower(path, o);
  Recorder r;
  ASSERT_TRUE(f.read_new(r.callback()).ok());
  EXPECT_EQ(r.joined(), "[appeared]");
  append(path, "new\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "new\n"; }));
  // A replacement is read from its start even so.
  std::string fresh = dir.write("tmp", "fresh\n");
  ASSERT_EQ(std::rename(fresh.c_str(), path.c_str()), 0);
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "new\nfresh\n"; })) << r.joined();
}

TEST(FollowOptionsTest, RejectsBadOptionsAndPaths) {
  rldk::FollowOptions o;
  o.chunk_bytes = 0;
  EXPECT_EQ(rldk::FileFollower::open("x.jsonl", o).error().code, rldk::ErrorCode::invalid_argument);
  EXPECT_EQ(rldk::FileFollower::open("").error().code, rldk::ErrorCode::invalid_argument);
  TempDir dir;
  auto f = open_follower(dir.path(), {});
  Recorder r;
  auto p = f.read_new(r.callback());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, rldk::ErrorCode::unreadable);
}

TEST(FollowOptionsTest, LocalFileSystemKeepsInotify) {
  // The temporary directory is local: inotify must stay in use there (the list of network file systems that force
  // polling is data in follow_notify.cpp and needs such a mount to exercise).
  TempDir dir;
  EXPECT_TRUE(rldk::io::inotify_sees_changes(dir.path()));
  auto f = open_follower(dir.path("x.jsonl"), mode_options(true));
  EXPECT_GE(f.poll_fd(), 0);
  EXPECT_EQ(rldk::io::parent_directory("a/b/c.jsonl"), "a/b");
  EXPECT_EQ(rldk::io::parent_directory("c.jsonl"), ".");
  EXPECT_EQ(rldk::io::parent_directory("/c.jsonl"), "/");
}

// ---------------------------------------------------------------------------------------------------------------
// DirectoryFollower.

class DirFollow : public ::testing::TestWithParam<bool> {
 protected:
  rldk::DirectoryFollowOptions options() const {
    rldk::DirectoryFollowOptions o;
    o.follow = mode_options(GetParam());
    o.rescan_interval_ms = 30;
    return o;
  }
  rldk::DirectoryFollower open_dir(const std::string& path) const {
    auto f = rldk::DirectoryFollower::open(path, options());
    EXPECT_TRUE(f.ok());
    return std::move(f.value());
  }
};

TEST_P(DirFollow, PicksNewestRunFileAndSwitches) {
  TempDir dir;
  set_mtime(dir.write("a.jsonl", "a1\n"), 1'000'000);
  set_mtime(dir.write("b.jsonl", "b1\n"), 1'000'100);
  set_mtime(dir.write(".hidden.jsonl", "h\n"), 1'000'200);  // hidden: never
  set_mtime(dir.write("notes.md", "n\n"), 1'000'300);       // not a run file
  std::filesystem::create_directories(dir.path("sub.jsonl"));  // a directory, whatever its name
  auto f = open_dir(dir.path());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "b1\n"; })) << r.joined();
  EXPECT_EQ(r.joined(), "[switched:b.jsonl][data:b1\n]");
  EXPECT_EQ(f.current_path(), dir.path("b.jsonl"));
  // The current file gets a last line, then a newer run starts in c.jsonl.
  append(dir.path("b.jsonl"), "b2\n");
  append(dir.path("c.jsonl"), "c1\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "b1\nb2\nc1\n"; })) << r.joined();
  EXPECT_EQ(r.joined(), "[switched:b.jsonl][data:b1\nb2\n][switched:c.jsonl][data:c1\n]");
  append(dir.path("c.jsonl"), "c2\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "b1\nb2\nc1\nc2\n"; })) << r.joined();
}

TEST_P(DirFollow, NeverSwitchesBackToAFileItLeft) {
  TempDir dir;
  set_mtime(dir.write("run_1.csv", "step,loss\n1,0.5\n"), 1'000'000);
  auto f = open_dir(dir.path());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.has("data:step,loss\n1,0.5\n"); })) << r.joined();
  dir.write("run_2.csv", "step,loss\n1,0.7\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.has("switched:run_2.csv") && r.data.size() == 32; })) << r.joined();
  // run_1 is written again and is now the newest by mtime; following it again would re-read it from the start.
  append(dir.path("run_1.csv"), "2,0.4\n");
  append(dir.path("run_2.csv"), "2,0.6\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data.find("2,0.6\n") != std::string::npos; })) << r.joined();
  std::this_thread::sleep_for(80ms);  // more than a rescan interval
  ASSERT_TRUE(f.read_new(r.callback()).ok());
  EXPECT_EQ(r.joined(),
            "[switched:run_1.csv][data:step,loss\n1,0.5\n][switched:run_2.csv][data:step,loss\n1,0.7\n2,0.6\n]");
}

TEST_P(DirFollow, EqualTimesPickTheLargerName) {
  TempDir dir;
  set_mtime(dir.write("run_0001.jsonl", "1\n"), 1'000'000);
  set_mtime(dir.write("run_0002.jsonl", "2\n"), 1'000'000);
  set_mtime(dir.write("RUN_0000.LOG", "0\n"), 999'999);  // extensions match case-insensitively, but older
  auto f = open_dir(dir.path());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "2\n"; })) << r.joined();
  EXPECT_EQ(r.events.front(), "switched:run_0002.jsonl");
}

TEST_P(DirFollow, WaitsForDirectoryAndFirstFile) {
  TempDir dir;
  std::string logs = dir.path("logs");
  auto f = open_dir(logs);
  Recorder r;
  ASSERT_TRUE(f.read_new(r.callback()).ok());
  EXPECT_TRUE(r.events.empty());
  EXPECT_TRUE(f.current_path().empty());
  std::filesystem::create_directories(logs);
  ASSERT_TRUE(f.read_new(r.callback()).ok());
  std::thread writer([&] {
    std::this_thread::sleep_for(30ms);
    append(logs + "/train.log", "step 1 loss 0.5\n");
  });
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "step 1 loss 0.5\n"; })) << r.joined();
  writer.join();
  EXPECT_EQ(r.joined(), "[switched:train.log][data:step 1 loss 0.5\n]");
}

TEST_P(DirFollow, CurrentFileTruncatedOrReplacedInPlace) {
  TempDir dir;
  dir.write("metrics.jsonl", "1\n2\n");
  auto f = open_dir(dir.path());
  Recorder r;
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n2\n"; })) << r.joined();
  overwrite(dir.path("metrics.jsonl"), "3\n");
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n2\n3\n"; })) << r.joined();
  std::string fresh = dir.write(".metrics.tmp", "4\n");  // hidden while being written, then renamed into place
  ASSERT_EQ(std::rename(fresh.c_str(), dir.path("metrics.jsonl").c_str()), 0);
  ASSERT_TRUE(pump_until(f, r, [&] { return r.data == "1\n2\n3\n4\n"; })) << r.joined();
  EXPECT_EQ(r.joined(), "[switched:metrics.jsonl][data:1\n2\n][truncated][data:3\n][replaced][data:4\n]");
}

TEST_P(DirFollow, PathThatIsAFileIsAnError) {
  TempDir dir;
  auto f = open_dir(dir.write("x.jsonl", "1\n"));
  Recorder r;
  auto p = f.read_new(r.callback());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, rldk::ErrorCode::unreadable);
}

INSTANTIATE_TEST_SUITE_P(Follow, DirFollow, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "inotify" : "polling"; });

TEST(DirFollowOptions, ModeAndValidation) {
  TempDir dir;
  rldk::DirectoryFollowOptions o;
  o.follow.use_inotify = false;
  auto polling = rldk::DirectoryFollower::open(dir.path(), o);
  ASSERT_TRUE(polling.ok());
  EXPECT_EQ(polling->poll_fd(), -1);
  EXPECT_EQ(polling->suggested_timeout_ms(), o.follow.poll_interval_ms);
  auto watching = rldk::DirectoryFollower::open(dir.path());
  ASSERT_TRUE(watching.ok());
  EXPECT_GE(watching->poll_fd(), 0);
  o.extensions.clear();
  EXPECT_FALSE(rldk::DirectoryFollower::open(dir.path(), o).ok());
}

// ---------------------------------------------------------------------------------------------------------------
// FdSource (stdin and other pipes).

TEST(StdinSource, ReadsPipeToEndWithoutChangingItsFlags) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  int flags_before = ::fcntl(fds[0], F_GETFL);
  rldk::FdSource source(fds[0], /*owned=*/true);
  std::string expected;
  for (int i = 0; i < 50; ++i) expected += "step " + std::to_string(i) + " loss 0.25\n";
  std::thread writer([&] {
    for (size_t i = 0; i < expected.size(); i += 97) {
      (void)!::write(fds[1], expected.data() + i, std::min<size_t>(97, expected.size() - i));
      std::this_thread::sleep_for(1ms);
    }
    ::close(fds[1]);
  });
  Recorder r;
  auto deadline = Clock::now() + 2s;
  while (!source.at_end() && Clock::now() < deadline) {
    EXPECT_EQ(::fcntl(fds[0], F_GETFL), flags_before);  // no O_NONBLOCK on a descriptor others may share
    pollfd p{source.poll_fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
    ASSERT_TRUE(source.read_new(r.callback()).ok());
  }
  writer.join();
  EXPECT_TRUE(source.at_end());
  EXPECT_EQ(source.poll_fd(), -1);
  EXPECT_EQ(r.data, expected);
  EXPECT_EQ(r.events.back(), "ended");
  // Nothing after the end, and `ended` only once.
  ASSERT_TRUE(source.read_new(r.callback()).ok());
  EXPECT_EQ(std::count(r.events.begin(), r.events.end(), "ended"), 1);
}

TEST(StdinSource, ReturnsAtOnceWhenNothingIsThere) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  rldk::FdSource source(fds[0], true);
  Recorder r;
  auto start = Clock::now();
  auto p = source.read_new(r.callback());
  EXPECT_LT(Clock::now() - start, 50ms);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->bytes, 0u);
  EXPECT_FALSE(source.at_end());
  ::close(fds[1]);
  ASSERT_TRUE(source.read_new(r.callback()).ok());
  EXPECT_TRUE(source.at_end());
}

TEST(StdinSource, BudgetPerCall) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  rldk::FdSourceOptions o;
  o.chunk_bytes = 100;
  o.max_bytes_per_call = 250;
  rldk::FdSource source(fds[0], true, o);
  std::string text(1000, 'x');
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), 1000);
  ::close(fds[1]);
  Recorder r;
  auto p = source.read_new(r.callback());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->bytes, 250u);
  EXPECT_TRUE(p->more);
  while (!source.at_end()) ASSERT_TRUE(source.read_new(r.callback()).ok());
  EXPECT_EQ(r.data, text);
  EXPECT_LE(r.max_chunk, 100u);
}

}  // namespace
