// Whole sources through rldk::read_runs and rldk::summarize_source: plain and compressed files, truncated streams,
// directories of runs, and the errors a user can cause.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <string>

#include "fixtures.h"
#include "rldk/summary.h"
#include "test_support.h"

namespace {

using namespace rldk_test;

std::string gzip_bytes(const TempDir& dir, std::string_view data) {
  std::string path = dir.path("scratch.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return "";
  EXPECT_EQ(gzwrite(f, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  EXPECT_EQ(gzclose(f), Z_OK);
  std::string bytes = read_file(path);
  std::remove(path.c_str());
  return bytes;
}

std::string zstd_bytes(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// `lines` wide JSONL records from step `first`, with varied values (so that compression does not shrink them to
// nothing).
std::string many_lines_from(int first, int lines) {
  std::string text;
  for (int i = first; i < first + lines; ++i) {
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "{\"step\": %d, \"loss\": %.6f, \"kl\": %.9f}\n", i, 1.0 / (i + 1),
                  (i * 7919 % 1000) / 1e6);
    text += buffer;
  }
  return text;
}

std::string many_lines(int lines) { return many_lines_from(0, lines); }

double loss_at(int i) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6f", 1.0 / (i + 1));
  return std::strtod(buffer, nullptr);
}

const std::string SMALL = "{\"step\": 1, \"loss\": 0.5, \"kl\": NaN}\n{\"step\": 2, \"loss\": 0.4, \"kl\": 0.1}\n";

void expect_small(const rldk::Run& run) {
  EXPECT_TRUE(has_series(run, "train/loss", {1, 2}, {0.5, 0.4}));
  EXPECT_TRUE(has_series(run, "policy/kl", {1, 2}, {NaN, 0.1}));
  EXPECT_EQ(run.series.size(), 2u) << names_of(run);
}

TEST(ReadRuns, PlainFile) {
  TempDir dir;
  std::string path = dir.write("run1.jsonl", SMALL);
  auto runs = rldk::read_runs(path);
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 1u);
  const rldk::Run& run = runs->front();
  EXPECT_EQ(run.run_id, "run1");  // the file stem
  EXPECT_EQ(run.source.path, path);
  EXPECT_EQ(run.source.format, "jsonl");
  EXPECT_EQ(run.source.compression, "");
  EXPECT_TRUE(run.diagnostics.empty());
  expect_small(run);
}

TEST(ReadRuns, CompressedFilesAreDetectedByContent) {
  TempDir dir;
  struct Case {
    const char* file;
    std::string bytes;
    const char* compression;
    const char* run_id;
  };
  for (const Case& c : {Case{"run2.jsonl.gz", gzip_bytes(dir, SMALL), "gzip", "run2"},
                        Case{"run3.jsonl.zst", zstd_bytes(SMALL), "zstd", "run3"},
                        Case{"misnamed.jsonl", gzip_bytes(dir, SMALL), "gzip", "misnamed"},
                        Case{"progress.csv.gz", gzip_bytes(dir, "step,loss,kl\n1,0.5,nan\n2,0.4,0.1\n"), "gzip",
                             ""}}) {
    std::string path = dir.write(c.file, c.bytes);
    auto runs = rldk::read_runs(path);
    ASSERT_TRUE(runs.ok()) << c.file << ": " << rldk::to_string(runs.error());
    ASSERT_EQ(runs->size(), 1u) << c.file;
    const rldk::Run& run = runs->front();
    EXPECT_EQ(run.source.compression, c.compression) << c.file;
    if (*c.run_id) {
      EXPECT_EQ(run.run_id, c.run_id) << c.file;
    }
    EXPECT_TRUE(run.diagnostics.empty()) << c.file;
    expect_small(run);
  }
}

TEST(ReadRuns, LargeCompressedFilesAreReadCompletely) {
  TempDir dir;
  // Decompressed sizes around the reader's 1 MiB chunks (zstd blocks are 128 KiB): just under one chunk, just over
  // one and two chunks, and several chunks.
  constexpr size_t MIB = size_t{1} << 20;
  for (size_t target : {MIB - 10000, MIB + 10000, MIB + 100000, 2 * MIB + 50000, 4 * MIB + 200000}) {
    int lines = 0;
    std::string text;
    while (text.size() < target) text += many_lines_from(lines++, 1);
    for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"big.jsonl.gz", gzip_bytes(dir, text)},
                                      std::pair<std::string, std::string>{"big.jsonl.zst", zstd_bytes(text)}}) {
      std::string path = dir.write(name, bytes);
      auto runs = rldk::read_runs(path);
      ASSERT_TRUE(runs.ok()) << name << ": " << rldk::to_string(runs.error());
      const rldk::Run& run = runs->front();
      EXPECT_TRUE(run.diagnostics.empty())
          << name << " (" << text.size() << " bytes): "
          << (run.diagnostics.examples().empty() ? "" : rldk::to_string(run.diagnostics.examples()[0]));
      const rldk::Series* loss = run.find("train/loss");
      ASSERT_NE(loss, nullptr);
      EXPECT_EQ(loss->size(), static_cast<size_t>(lines)) << name << " (" << text.size() << " bytes)";
      if (loss->size() == static_cast<size_t>(lines)) {
        EXPECT_EQ(loss->values.back(), loss_at(lines - 1));
      }
    }
  }
}

// UTF-16 with a byte-order mark, as Windows PowerShell's `>` redirect writes a trainer's console: UTF-8 to every
// reader, little- and big-endian, compressed or not, over reads that split a code unit or a surrogate pair.
std::string utf16(const std::string& ascii, bool big_endian, const std::string& suffix_units = "") {
  std::string out = big_endian ? std::string("\xFE\xFF") : std::string("\xFF\xFE");
  for (char c : ascii) out += big_endian ? std::string{'\0', c} : std::string{c, '\0'};
  return out + suffix_units;
}

TEST(ReadRuns, Utf16TextIsReadAsUtf8) {
  TempDir dir;
  std::string console;
  for (int i = 1; i <= 40000; ++i) {  // about 2 MiB of UTF-16: reads split code units across chunks
    console += "{'loss': " + std::to_string(1.0 / i) + ", 'kl': 0.01, 'epoch': " + std::to_string(i) + "}\n";
  }
  for (bool big_endian : {false, true}) {
    // U+1F600 as a surrogate pair, then a line break, at the end: a 4-byte UTF-8 character in the last line.
    std::string smile = big_endian ? std::string("\xD8\x3D\xDE\x00\x00\x0A", 6)
                                   : std::string("\x3D\xD8\x00\xDE\x0A\x00", 6);
    std::string bytes = utf16(console, big_endian, smile);
    for (const auto& [name, data] : {std::pair<std::string, std::string>{"ps.log", bytes},
                                     std::pair<std::string, std::string>{"ps.log.gz", gzip_bytes(dir, bytes)}}) {
      auto runs = rldk::read_runs(dir.write(name, data));
      ASSERT_TRUE(runs.ok()) << name << ": " << rldk::to_string(runs.error());
      const rldk::Series* loss = runs->front().find("train/loss");
      ASSERT_NE(loss, nullptr) << name;
      EXPECT_EQ(loss->size(), 40000u) << name << (big_endian ? " big-endian" : "");
      EXPECT_DOUBLE_EQ(loss->values.back(), std::stod(std::to_string(1.0 / 40000))) << name;
    }
  }
  // An unpaired surrogate and a last odd byte are replaced, not fatal.
  auto runs = rldk::read_runs(dir.write("odd.jsonl", utf16("{\"step\": 1, \"loss\": 0.5}\n", false,
                                                           std::string("\x00\xDC\x0A\x00\x41", 5))));
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  EXPECT_TRUE(has_series(runs->front(), "train/loss", {1}, {0.5}));
}

TEST(ReadRuns, ConcatenatedGzipMembersAreOneStream) {
  TempDir dir;
  std::string path = dir.write("cat.jsonl.gz", gzip_bytes(dir, "{\"step\": 1, \"loss\": 0.5}\n") +
                                                   gzip_bytes(dir, "{\"step\": 2, \"loss\": 0.4}\n"));
  auto runs = rldk::read_runs(path);
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  EXPECT_TRUE(has_series(runs->front(), "train/loss", {1, 2}, {0.5, 0.4}));
  EXPECT_TRUE(runs->front().diagnostics.empty());
}

TEST(ReadRuns, TruncatedCompressedFileKeepsTheDataBefore) {
  TempDir dir;
  // Big enough that the first 60% of the compressed bytes hold whole zstd blocks (128 KiB of text each).
  const int lines = 20000;
  std::string text = many_lines(lines);
  for (const auto& [name, full] : {std::pair<std::string, std::string>{"cut.jsonl.gz", gzip_bytes(dir, text)},
                                   std::pair<std::string, std::string>{"cut.jsonl.zst", zstd_bytes(text)}}) {
    std::string path = dir.write(name, full.substr(0, full.size() * 6 / 10));
    auto runs = rldk::read_runs(path);
    ASSERT_TRUE(runs.ok()) << name << ": " << rldk::to_string(runs.error());
    const rldk::Run& run = runs->front();
    EXPECT_EQ(count_of(run.diagnostics, "truncated_input"), 1u) << name;
    ASSERT_FALSE(lines_of(run.diagnostics, "truncated_input").empty()) << name;
    const rldk::Series* loss = run.find("train/loss");
    ASSERT_NE(loss, nullptr) << name;
    EXPECT_GT(loss->size(), 100u) << name;
    EXPECT_LT(loss->size(), static_cast<size_t>(lines)) << name;
    // What was kept is exactly the beginning of the data.
    for (size_t i = 0; i < loss->size(); ++i) {
      ASSERT_EQ(loss->steps[i], static_cast<int64_t>(i)) << name;
      ASSERT_EQ(loss->values[i], loss_at(static_cast<int>(i))) << name;
    }
    // The diagnostic points at the last complete line.
    EXPECT_GE(lines_of(run.diagnostics, "truncated_input")[0], loss->size() - 1) << name;
  }
}

TEST(ReadRuns, Errors) {
  TempDir dir;
  struct Case {
    const char* name;
    std::string path;
    rldk::ErrorCode code;
  };
  std::string binary(256, '\0');
  for (int i = 0; i < 256; ++i) binary[i] = static_cast<char>(i);
  dir.write("empty_dir/.keep", "");
  const Case cases[] = {
      {"missing", dir.path("nope.jsonl"), rldk::ErrorCode::not_found},
      {"missing_in_missing_dir", dir.path("no/such/dir"), rldk::ErrorCode::not_found},
      {"binary", dir.write("blob.jsonl", binary), rldk::ErrorCode::unrecognized},
      {"empty_file", dir.write("empty.jsonl", ""), rldk::ErrorCode::unrecognized},
      {"prose", dir.write("readme.txt", "Hello, this is a readme.\nNothing to see.\n"), rldk::ErrorCode::unrecognized},
      {"only_malformed", dir.write("bad.jsonl", "{\"step\": 1, \n{\"step\": 2, \n"), rldk::ErrorCode::unrecognized},
      {"dir_without_logs", dir.path("empty_dir"), rldk::ErrorCode::unrecognized},
  };
  for (const Case& c : cases) {
    auto runs = rldk::read_runs(c.path);
    ASSERT_FALSE(runs.ok()) << c.name;
    EXPECT_EQ(static_cast<int>(runs.error().code), static_cast<int>(c.code)) << c.name << ": "
                                                                             << rldk::to_string(runs.error());
    EXPECT_EQ(runs.error().context, c.path) << c.name;
    auto summaries = rldk::summarize_source(c.path);
    ASSERT_FALSE(summaries.ok()) << c.name;
    EXPECT_EQ(static_cast<int>(summaries.error().code), static_cast<int>(c.code)) << c.name;
  }
}

std::string trainer_state(std::initializer_list<std::pair<int, double>> entries) {
  std::string text = "{\n  \"log_history\": [\n";
  bool first = true;
  for (const auto& [step, loss] : entries) {
    if (!first) text += ",\n";
    first = false;
    text += "    {\"loss\": " + std::to_string(loss) + ", \"step\": " + std::to_string(step) + "}";
  }
  return text + "\n  ]\n}\n";
}

TEST(ReadRuns, DirectoryOfRuns) {
  TempDir dir;
  // run_a: the top-level trainer_state.json wins over the checkpoint copies.
  dir.write("run_a/trainer_state.json", trainer_state({{10, 0.5}, {20, 0.25}, {30, 0.125}}));
  dir.write("run_a/checkpoint-10/trainer_state.json", trainer_state({{10, 0.5}}));
  dir.write("run_a/checkpoint-20/trainer_state.json", trainer_state({{10, 0.5}, {20, 0.25}}));
  // run_b: no top-level copy, the newest checkpoint by number (10 > 9, although "checkpoint-10" < "checkpoint-9").
  dir.write("run_b/checkpoint-9/trainer_state.json", trainer_state({{9, 0.75}}));
  dir.write("run_b/checkpoint-10/trainer_state.json", trainer_state({{9, 0.75}, {10, 0.5}}));
  dir.write("run_c.jsonl", SMALL);
  dir.write("run_d/metrics.jsonl", SMALL);  // a generic name: the run is named after its folder
  // Hidden folders and files, and files that are not run logs, are not read.
  dir.write(".hidden/run_x.jsonl", SMALL);
  dir.write("run_e/.cache/run_y.jsonl", SMALL);
  dir.write(".run_z.jsonl", SMALL);
  dir.write("notes/readme.md", "# notes\nstep=1 loss=0.5\n");
  dir.write("config.json", "{\"step\": 1, \"loss\": 0.5}\n");
  // A log-like file without metrics is skipped and reported.
  dir.write("junk.txt", "hello world\nnothing here\n");

  auto runs = rldk::read_runs(dir.path());
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  std::vector<std::string> ids;
  for (const auto& r : runs.value()) ids.push_back(r.run_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"run_a", "run_b", "run_c", "run_d"}));
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ(runs->at(0).source.path, dir.path("run_a/trainer_state.json"));
  EXPECT_TRUE(has_series(runs->at(0), "train/loss", {10, 20, 30}, {0.5, 0.25, 0.125}));
  EXPECT_EQ(runs->at(1).source.path, dir.path("run_b/checkpoint-10/trainer_state.json"));
  EXPECT_TRUE(has_series(runs->at(1), "train/loss", {9, 10}, {0.75, 0.5}));
  expect_small(runs->at(2));
  expect_small(runs->at(3));
  // The skipped file is reported once, on the first run.
  EXPECT_EQ(count_of(runs->at(0).diagnostics, "skipped_file"), 1u);
  ASSERT_FALSE(runs->at(0).diagnostics.examples().empty());
  EXPECT_EQ(runs->at(0).diagnostics.examples()[0].file, dir.path("junk.txt"));
  for (size_t i = 1; i < runs->size(); ++i) EXPECT_TRUE(runs->at(i).diagnostics.empty()) << i;
}

TEST(ReadRuns, WandbRunFolderWithoutItsLogIsReadFromItsConsoleCopy) {
  // W&B run folders are often committed without run-<id>.wandb (git-ignored): the console copy files/output.log is
  // the run then, named by its W&B id; its other files are not runs, and a folder with its log is read from the log.
  TempDir dir;
  dir.write("wandb/run-20260425_174928-7yj6c945/files/output.log", "step=1 loss=0.5\nstep=2 loss=0.25\n");
  dir.write("wandb/run-20260425_174928-7yj6c945/files/requirements.txt", "torch==2.1.0\nnumpy==1.26\n");
  dir.write("wandb/run-20260425_174928-7yj6c945/logs/debug.log", "step=1 loss=9\n");
  auto runs = rldk::read_runs(dir.path("wandb"));
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->at(0).run_id, "7yj6c945");
  EXPECT_TRUE(has_series(runs->at(0), "train/loss", {1, 2}, {0.5, 0.25}));
}

TEST(ReadRuns, AFolderWithOnlyANotebookSaysHowToReadIt) {
  // Notebooks are read when named, not found in a folder: a folder holding only the Colab notebook that ran the
  // training names it in the error.
  TempDir dir;
  dir.write("grpo/train.ipynb", "{\"cells\": [], \"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 5}\n");
  auto runs = rldk::read_runs(dir.path());
  ASSERT_FALSE(runs.ok());
  std::string message = rldk::to_string(runs.error());
  EXPECT_NE(message.find("name it to read its outputs (" + dir.path("grpo/train.ipynb") + ")"), std::string::npos)
      << message;
}

TEST(ReadRuns, AJsonDumpNamedLikeALogIsFoundInAFolder) {
  // Training scripts dump their step records as JSON (training_log.json, dpo_history.json): a folder scan finds them
  // by name. A .json file whose name says settings is not a run, even with numbers in it.
  TempDir dir;
  dir.write("grpo/training_log.json", "[{\"step\": 1, \"loss\": 0.5}, {\"step\": 2, \"loss\": 0.25}]\n");
  dir.write("grpo/logging_config.json", "{\"version\": 1, \"step\": 1, \"loss\": 9}\n");
  dir.write("grpo/adapter_config.json", "{\"r\": 16, \"lora_alpha\": 32}\n");
  dir.write("grpo/logprob_mismatch-grpo-01.labels.json", "{\"step\": 1, \"onset_step\": 5}\n");
  dir.write("grpo/catalog.json", "[{\"step\": 1, \"loss\": 9}]\n");
  auto runs = rldk::read_runs(dir.path());
  ASSERT_TRUE(runs.ok()) << rldk::to_string(runs.error());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->at(0).source.path, dir.path("grpo/training_log.json"));
  EXPECT_TRUE(has_series(runs->at(0), "train/loss", {1, 2}, {0.5, 0.25}));
}

TEST(ReadRuns, DiagnosticsStayWithTheirFile) {
  TempDir dir;
  dir.write("a.jsonl", "{\"step\": 1, \"loss\": 0.5}\n{broken\n");
  dir.write("b.jsonl", "{\"step\": 1, \"loss\": 0.5}\n");
  auto runs = rldk::read_runs(dir.path());
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ(count_of(runs->at(0).diagnostics, "malformed_json"), 1u);
  EXPECT_EQ(lines_of(runs->at(0).diagnostics, "malformed_json"), std::vector<uint64_t>{2});
  EXPECT_TRUE(runs->at(1).diagnostics.empty());
}

TEST(ReadRuns, RunIdOption) {
  TempDir dir;
  rldk::ReadOptions options;
  options.run_id = "chosen";
  auto runs = rldk::read_runs(dir.write("x.jsonl", SMALL), options);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->front().run_id, "chosen");
}

TEST(SummarizeSource, PerMetricSummaries) {
  TempDir dir;
  std::string path = dir.write("s.jsonl",
                               "{\"step\": 1, \"loss\": 0.5, \"kl\": 0.2}\n"
                               "{\"step\": 2, \"loss\": NaN}\n"
                               "{\"step\": 3, \"loss\": 0.3, \"kl\": 0.1}\n"
                               "{\"step\": 4, \"loss\": Infinity}\n"
                               "{\"step\": 2, \"loss\": 0.1}\n");
  auto summaries = rldk::summarize_source(path);
  ASSERT_TRUE(summaries.ok()) << rldk::to_string(summaries.error());
  ASSERT_EQ(summaries->size(), 1u);
  const rldk::RunSummary& s = summaries->front();
  EXPECT_EQ(s.run_id, "s");
  EXPECT_EQ(s.points, 7u);
  EXPECT_EQ(s.first_step, 1);
  EXPECT_EQ(s.last_step, 4);
  ASSERT_EQ(s.segments.size(), 2u);
  EXPECT_EQ(s.segments[1].first_step, 2);
  EXPECT_EQ(s.segments[1].start_line, 5u);
  ASSERT_EQ(s.metrics.count("train/loss"), 1u);
  const rldk::MetricSummary& loss = s.metrics.at("train/loss");
  EXPECT_EQ(loss.raw_names, std::vector<std::string>{"loss"});
  EXPECT_EQ(loss.count, 5u);
  EXPECT_EQ(loss.non_finite, 2u);
  EXPECT_DOUBLE_EQ(loss.min, 0.1);
  EXPECT_DOUBLE_EQ(loss.max, 0.5);
  EXPECT_DOUBLE_EQ(loss.last, 0.1);
  EXPECT_EQ(loss.first_step, 1);
  EXPECT_EQ(loss.last_step, 4);
  EXPECT_EQ(loss.first_non_finite_step, 2);
  EXPECT_EQ(loss.first_non_finite_line, 2u);
  const rldk::MetricSummary& kl = s.metrics.at("policy/kl");
  EXPECT_EQ(kl.count, 2u);
  EXPECT_EQ(kl.non_finite, 0u);
  EXPECT_DOUBLE_EQ(kl.min, 0.1);
  EXPECT_DOUBLE_EQ(kl.max, 0.2);
}

TEST(SummarizeSource, AllNonFiniteMetricHasNaNMinMax) {
  TempDir dir;
  auto summaries = rldk::summarize_source(dir.write("n.jsonl", "{\"step\": 1, \"loss\": NaN}\n"));
  ASSERT_TRUE(summaries.ok());
  const rldk::MetricSummary& loss = summaries->front().metrics.at("train/loss");
  EXPECT_TRUE(std::isnan(loss.min));
  EXPECT_TRUE(std::isnan(loss.max));
  EXPECT_TRUE(std::isnan(loss.last));
  EXPECT_EQ(loss.non_finite, 1u);
}

TEST(SummarizeSource, AgreesWithReadRunsOnEveryFormat) {
  TempDir dir;
  dir.write("a/events.jsonl", LONG_FORM_JSONL);
  dir.write("b/trainer_state.json", TRAINER_STATE_JSON);
  dir.write("c/metrics.csv", CSV_WITH_HEADER_CHANGE);
  dir.write("d/train.log", HF_CONSOLE);
  dir.write("e/verl.log", VERL_CONSOLE);
  dir.write("f/metrics.tsv.gz", gzip_bytes(dir, TSV));
  auto runs = rldk::read_runs(dir.path());
  auto summaries = rldk::summarize_source(dir.path());
  ASSERT_TRUE(runs.ok() && summaries.ok());
  ASSERT_EQ(runs->size(), summaries->size());
  ASSERT_EQ(runs->size(), 6u);
  for (size_t i = 0; i < runs->size(); ++i) {
    const rldk::Run& run = runs->at(i);
    const rldk::RunSummary& sum = summaries->at(i);
    EXPECT_EQ(run.run_id, sum.run_id);
    EXPECT_EQ(run.source.path, sum.source.path);
    EXPECT_EQ(run.point_count(), sum.points) << run.run_id;
    EXPECT_EQ(run.first_step(), sum.first_step) << run.run_id;
    EXPECT_EQ(run.last_step(), sum.last_step) << run.run_id;
    EXPECT_EQ(run.meta, sum.meta) << run.run_id;
    ASSERT_EQ(run.series.size(), sum.metrics.size()) << run.run_id;
    for (const auto& [name, series] : run.series) {
      const rldk::MetricSummary& m = sum.metrics.at(name);
      EXPECT_EQ(series.size(), m.count) << name;
      EXPECT_EQ(series.non_finite_count(), m.non_finite) << name;
    }
  }
  EXPECT_EQ(runs->at(5).source.compression, "gzip");
}

}  // namespace
