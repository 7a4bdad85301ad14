// Replica runner (real processes: own folder, environment, timeout, captured output) and replica comparison.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "rldk/determinism.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "rldk-replica-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(ReplicaRunner, EachReplicaHasItsOwnFolderEnvironmentAndOutput) {
  ScratchDir dir;
  rldk::ReplicaRunOptions o;
  o.command = "echo \"{\\\"step\\\": 1, \\\"loss\\\": $RLDK_REPLICA_INDEX}\" > \"$RLDK_METRICS_PATH\"; "
              "echo out-$RLDK_REPLICA_INDEX; echo err-$PYTHONHASHSEED >&2; pwd";
  o.replicas = 3;
  o.parallel = 2;
  o.work_root = dir.path.string();
  o.environment = rldk::determinism_environment(5, 1);
  auto outcomes = rldk::run_replicas(o);
  ASSERT_TRUE(outcomes.ok()) << rldk::to_string(outcomes.error());
  ASSERT_EQ(outcomes->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& r = outcomes.value()[i];
    EXPECT_TRUE(r.succeeded()) << r.describe();
    EXPECT_EQ(r.index, i);
    EXPECT_EQ(r.work_dir, (dir.path / ("replica_" + std::to_string(i))).string());
    EXPECT_EQ(r.stdout_tail, "out-" + std::to_string(i) + "\n" + r.work_dir + "\n");
    EXPECT_EQ(r.stderr_tail, "err-5\n");
    EXPECT_EQ(read_file(r.stdout_path), r.stdout_tail);
    auto run = rldk::load_replica_metrics(r);
    ASSERT_TRUE(run.ok());
    ASSERT_NE(run->find("train/loss"), nullptr);
    EXPECT_EQ(run->find("train/loss")->values, std::vector<double>{static_cast<double>(i)});
  }
}

TEST(ReplicaRunner, ParallelReplicasOverlap) {
  ScratchDir dir;
  rldk::ReplicaRunOptions o;
  o.command = "sleep 0.4";
  o.replicas = 4;
  o.parallel = 4;
  o.work_root = dir.path.string();
  auto start = std::chrono::steady_clock::now();
  auto outcomes = rldk::run_replicas(o);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(outcomes.ok());
  EXPECT_LT(seconds, 1.5);  // 4 x 0.4 s in sequence would take 1.6 s
}

TEST(ReplicaRunner, CrashTimeoutAndNoMetricsAreFailures) {
  ScratchDir dir;
  rldk::ReplicaRunOptions o;
  // Replica 0 crashes, replica 1 hangs past the timeout, replica 2 exits cleanly having logged nothing.
  o.command = "case $RLDK_REPLICA_INDEX in 0) echo boom >&2; exit 3;; 1) sleep 30;; *) true;; esac";
  o.replicas = 3;
  o.parallel = 3;
  o.timeout = std::chrono::milliseconds(500);
  o.kill_grace = std::chrono::milliseconds(200);
  o.work_root = dir.path.string();
  auto outcomes = rldk::run_replicas(o);
  ASSERT_TRUE(outcomes.ok());
  const auto& r = outcomes.value();
  EXPECT_FALSE(r[0].succeeded());
  EXPECT_EQ(r[0].status->code, 3);
  EXPECT_EQ(r[0].stderr_tail, "boom\n");
  EXPECT_FALSE(r[1].succeeded());
  EXPECT_TRUE(r[1].timed_out);
  EXPECT_NE(r[1].describe().find("timed out"), std::string::npos);
  EXPECT_TRUE(r[2].succeeded());
  auto metrics = rldk::load_replica_metrics(r[2]);
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(metrics.error().message.find("logged no metrics"), std::string::npos);
}

TEST(ReplicaRunner, ConsoleOutputIsReadWhenNoMetricsFile) {
  ScratchDir dir;
  rldk::ReplicaRunOptions o;
  o.command = "for s in 1 2 3; do echo \"step=$s loss=0.$s\"; done";
  o.replicas = 1;
  o.work_root = dir.path.string();
  auto outcomes = rldk::run_replicas(o);
  ASSERT_TRUE(outcomes.ok());
  auto run = rldk::load_replica_metrics(outcomes->front());
  ASSERT_TRUE(run.ok()) << rldk::to_string(run.error());
  EXPECT_GT(run->point_count(), 0u);
}

TEST(ReplicaRunner, RefusesAFolderHoldingAnEarlierCheck) {
  ScratchDir dir;
  fs::create_directories(dir.path / "replica_0");
  std::ofstream(dir.path / "replica_0" / "metrics.jsonl") << "{}\n";
  rldk::ReplicaRunOptions o;
  o.command = "true";
  o.replicas = 1;
  o.work_root = dir.path.string();
  EXPECT_FALSE(rldk::run_replicas(o).ok());
}

rldk::Run run_with(const std::string& metric, std::vector<int64_t> steps, std::vector<double> values) {
  rldk::Run r;
  rldk::Series s;
  s.name = metric;
  s.steps = std::move(steps);
  s.values = std::move(values);
  s.wall_times.assign(s.steps.size(), rldk_test::NaN);
  s.segments.assign(s.steps.size(), 0);
  r.series[metric] = s;
  return r;
}

TEST(CompareReplicas, BitwiseFindsTheFirstDivergentStepAndSpread) {
  auto a = run_with("m", {1, 2, 3, 4}, {1.0, 2.0, 3.0, 4.0});
  auto b = run_with("m", {1, 2, 3, 4}, {1.0, 2.0, std::nextafter(3.0, 4.0), 4.5});
  auto c = run_with("m", {1, 2, 3, 4}, {1.0, 2.0, 3.0, 4.0});
  rldk::ReplicaCompareOptions o;
  o.metrics = {"m"};
  auto cmp = rldk::compare_replicas({a, b, c}, o);
  ASSERT_TRUE(cmp.errors.empty());
  const auto& m = cmp.metrics.at(0);
  EXPECT_FALSE(cmp.passed());
  EXPECT_EQ(m.first_divergent_step, 3);
  EXPECT_EQ(m.first_divergent_replica, 1u);
  EXPECT_EQ(m.divergent_steps, 2u);
  EXPECT_DOUBLE_EQ(m.max_abs_deviation, 0.5);
  EXPECT_EQ(m.max_deviation_step, 4);
  EXPECT_EQ(m.spread, (std::vector<double>{0.0, 0.0, std::nextafter(3.0, 4.0) - 3.0, 0.5}));
}

TEST(CompareReplicas, ToleranceAcceptsSmallDifferences) {
  auto a = run_with("m", {1, 2}, {1.0, 100.0});
  auto b = run_with("m", {1, 2}, {1.0 + 1e-9, 100.0 + 1e-5});
  rldk::ReplicaCompareOptions o;
  o.metrics = {"m"};
  o.bitwise = false;
  o.rtol = 1e-6;
  o.atol = 1e-8;
  auto cmp = rldk::compare_replicas({a, b}, o);
  EXPECT_TRUE(cmp.passed());
  EXPECT_NEAR(cmp.metrics[0].max_abs_deviation, 1e-5, 1e-9);  // measured even though it passed
  o.rtol = 1e-8;
  EXPECT_FALSE(rldk::compare_replicas({a, b}, o).passed());
}

TEST(CompareReplicas, MissingStepsAndMetricsAndNaN) {
  auto a = run_with("m", {1, 2, 3}, {1.0, rldk_test::NaN, 3.0});
  auto b = run_with("m", {1, 2}, {1.0, rldk_test::NaN});
  rldk::ReplicaCompareOptions o;
  o.metrics = {"m"};
  auto cmp = rldk::compare_replicas({a, b}, o);
  EXPECT_EQ(cmp.metrics[0].first_divergent_step, 3);  // NaN == NaN; step 3 missing in b
  EXPECT_EQ(cmp.metrics[0].first_divergent_reason, "missing");
  o.common_steps_only = true;
  EXPECT_TRUE(rldk::compare_replicas({a, b}, o).passed());
  o.metrics = {"absent"};
  auto missing = rldk::compare_replicas({a, b}, o);
  EXPECT_FALSE(missing.passed());
  ASSERT_EQ(missing.errors.size(), 1u);
  o.metrics = {"m"};
  o.steps = {10};
  EXPECT_FALSE(rldk::compare_replicas({a, b}, o).passed());  // nothing to compare is not a pass
}

TEST(Ulp, Distances) {
  EXPECT_EQ(rldk::ulp_distance(1.0, 1.0), 0u);
  EXPECT_EQ(rldk::ulp_distance(1.0, std::nextafter(1.0, 2.0)), 1u);
  EXPECT_EQ(rldk::ulp_distance(0.0, -0.0), 0u);
  EXPECT_EQ(rldk::ulp_distance(-std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::denorm_min()),
            2u);
}

TEST(CulpritHints, PatternsAndShape) {
  rldk::ReplicaOutcome o0, o1;
  o0.index = 0;
  o1.index = 1;
  o0.stderr_tail = "Global seed set to 11\n";
  o1.stderr_tail = "Global seed set to 12\nRuntimeError: scatter_add_cuda_kernel does not have a deterministic "
                   "implementation\n";
  rldk::ReplicaComparison cmp;
  rldk::MetricReplicaComparison m;
  m.name = "train/loss";
  m.first_divergent_step = 1;
  cmp.metrics.push_back(m);
  auto hints = rldk::culprit_hints({o0, o1}, cmp, 1);
  std::vector<std::string> ids;
  for (const auto& h : hints) ids.push_back(h.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"nondeterministic_op", "random_seed_printed", "diverges_from_first_step"}));
  // The same seed line everywhere is no evidence.
  o1.stderr_tail = "Global seed set to 11\n";
  cmp.metrics[0].first_divergent_step = 40;
  hints = rldk::culprit_hints({o0, o1}, cmp, 1);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].id, "diverges_later");
}

}  // namespace
