// CSV/TSV and W&B table sample files, read into a CellSink that records every cell: quoting (multi-line completions,
// doubled quotes, CRLF), damage (ragged rows, a file cut inside a quoted field, text in a numeric column, non-UTF-8
// bytes), numbers at the edges, records longer than Arrow's block, compression, and read_table's dispatch.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "samples/cell_sink.h"
#include "samples/csv_samples.h"
#include "samples/wandb_table_samples.h"
#include "test_support.h"

using rldk_test::TempDir;

namespace {

struct Cell {
  bool number = false;
  double value = 0;
  std::string text;
};

// Keeps everything a reader gives: the files begun, their columns and every row's cells by column name.
class RecordingSink : public rldk::samples::CellSink {
 public:
  struct File {
    std::string path, format;
    std::vector<rldk::samples::FileColumn> columns;
    std::optional<int64_t> step;
  };
  std::vector<File> files;
  std::vector<std::map<std::string, Cell>> rows_read;
  std::string refuse;  // begin_file fails for a file without this column

  rldk::Status begin_file(const std::string& path, const std::vector<rldk::samples::FileColumn>& columns,
                          std::optional<int64_t> file_step, const std::string& format) override {
    if (!refuse.empty() && std::none_of(columns.begin(), columns.end(), [&](auto& c) { return c.name == refuse; })) {
      return rldk::Error{rldk::ErrorCode::unrecognized, "no " + refuse + " column", path};
    }
    files.push_back({path, format, columns, file_step});
    return rldk::Ok{};
  }
  int column_index(std::string_view name) const override {
    const auto& c = files.back().columns;
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
  int add_column(const rldk::samples::FileColumn& column) override {
    files.back().columns.push_back(column);
    return static_cast<int>(files.back().columns.size() - 1);
  }
  void set_text(int column, std::string_view text) override { current_[name(column)].text = std::string(text); }
  void set_number(int column, double value) override {
    Cell& c = current_[name(column)];
    c.number = true;
    c.value = value;
  }
  void end_row(uint64_t) override {
    rows_read.push_back(std::move(current_));
    current_.clear();
  }
  uint64_t rows() const override { return rows_read.size(); }

  const std::string& text(size_t row, const std::string& column) { return rows_read.at(row).at(column).text; }
  double number(size_t row, const std::string& column) {
    const Cell& c = rows_read.at(row).at(column);
    EXPECT_TRUE(c.number) << column << " of row " << row << " is not a number";
    return c.value;
  }
  bool numeric(const std::string& column) const {
    for (const auto& c : files.back().columns) {
      if (c.name == column) return c.numeric;
    }
    ADD_FAILURE() << "no column " << column;
    return false;
  }

 private:
  std::string name(int column) const { return files.back().columns.at(static_cast<size_t>(column)).name; }
  std::map<std::string, Cell> current_;
};

rldk::Status read_csv(const std::string& path, RecordingSink& sink, rldk::Diagnostics& diagnostics,
                      int32_t block_size = 1 << 20) {
  rldk::samples::CsvOptions options;
  options.block_size = block_size;
  return rldk::samples::read_csv_samples(path, sink, diagnostics, options);
}

// The first diagnostic of `kind`, or a failure.
rldk::Diagnostic first(const rldk::Diagnostics& diagnostics, const std::string& kind) {
  for (const auto& d : diagnostics.examples()) {
    if (d.kind == kind) return d;
  }
  ADD_FAILURE() << "no " << kind << " diagnostic";
  return {};
}

std::string gzip(const TempDir& dir, std::string_view data) {
  std::string path = dir.path("scratch.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

}  // namespace

TEST(CsvSamples, QuotedMultiLineCompletionsWithQuotesAndCrlf) {
  TempDir dir;
  dir.write("s.csv",
            "step,prompt,completion,reward\r\n"
            "3,\"Say \"\"hi\"\"\",\"line one\r\nline \"\"two\"\", with a comma\r\n\r\nlast\",0.5\r\n"
            "3,p2,plain,-1\r\n");
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("s.csv"), sink, diagnostics).ok());
  ASSERT_EQ(sink.rows_read.size(), 2u);
  EXPECT_EQ(sink.files[0].format, "csv");
  EXPECT_TRUE(sink.numeric("step"));
  EXPECT_TRUE(sink.numeric("reward"));
  EXPECT_FALSE(sink.numeric("completion"));
  EXPECT_EQ(sink.text(0, "prompt"), "Say \"hi\"");
  EXPECT_EQ(sink.text(0, "completion"), "line one\r\nline \"two\", with a comma\r\n\r\nlast");
  EXPECT_EQ(sink.number(0, "step"), 3);
  EXPECT_EQ(sink.number(1, "reward"), -1);
  EXPECT_EQ(sink.text(1, "completion"), "plain");
  EXPECT_TRUE(diagnostics.empty());
}

TEST(CsvSamples, EmptyFileAndHeaderOnlyReadNoRows) {
  TempDir dir;
  dir.write("empty.csv", "");
  dir.write("blank.csv", "\n\r\n");
  dir.write("header.csv", "prompt,completion,reward\n");
  for (const char* name : {"empty.csv", "blank.csv", "header.csv"}) {
    RecordingSink sink;
    rldk::Diagnostics diagnostics;
    ASSERT_TRUE(read_csv(dir.path(name), sink, diagnostics).ok()) << name;
    EXPECT_TRUE(sink.files.empty()) << name;
    EXPECT_EQ(sink.rows_read.size(), 0u) << name;
    EXPECT_EQ(diagnostics.counts().at("empty_file"), 1u) << name;
    // Through read_table, a file of no samples is an error that says why.
    RecordingSink table_sink;
    rldk::Diagnostics table_diagnostics;
    auto read = rldk::samples::read_table(dir.path(name), table_sink, table_diagnostics);
    ASSERT_FALSE(read.ok()) << name;
    EXPECT_NE(read.error().message.find("no samples could be read"), std::string::npos) << read.error().message;
  }
}

TEST(CsvSamples, RaggedRowIsSkippedWithItsLine) {
  TempDir dir;
  dir.write("r.csv",
            "prompt,completion,reward\n"
            "p,\"two\nlines\",1\n"  // lines 2-3
            "p,short\n"             // line 4: a field missing
            "p,x,2,extra\n"         // line 5: one too many
            "p,y,3\n");
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("r.csv"), sink, diagnostics).ok());
  ASSERT_EQ(sink.rows_read.size(), 2u);
  EXPECT_EQ(sink.text(0, "completion"), "two\nlines");
  EXPECT_EQ(sink.number(1, "reward"), 3);
  EXPECT_EQ(diagnostics.counts().at("ragged_row"), 2u);
  EXPECT_EQ(diagnostics.examples()[0].line, 4u);
  EXPECT_EQ(diagnostics.examples()[1].line, 5u);
  EXPECT_NE(diagnostics.examples()[0].message.find("2 fields, the header has 3"), std::string::npos);
}

TEST(CsvSamples, FileCutInsideAQuotedFieldDropsThatRowOnly) {
  TempDir dir;
  // Cut in the last column: Arrow would make a whole row of it.
  dir.write("last.csv", "prompt,reward,completion\np,1,\"whole\"\np,2,\"cut off here\nand the rest");
  // Cut in a middle column: the row lacks fields.
  dir.write("middle.csv", "prompt,completion,reward\np,\"whole\",1\np,\"cut off\n3,x,4\n");
  for (const char* name : {"last.csv", "middle.csv"}) {
    RecordingSink sink;
    rldk::Diagnostics diagnostics;
    ASSERT_TRUE(read_csv(dir.path(name), sink, diagnostics).ok()) << name;
    ASSERT_EQ(sink.rows_read.size(), 1u) << name;
    EXPECT_EQ(sink.text(0, "completion"), "whole");
    EXPECT_TRUE(sink.numeric("reward")) << name;
    rldk::Diagnostic cut = first(diagnostics, "truncated_input");
    EXPECT_EQ(cut.line, 3u) << name;
    EXPECT_NE(cut.message.find("ends inside a quoted field"), std::string::npos);
  }
  // The cut-off row does not decide the column types either: a cut reward cell leaves the column numeric.
  dir.write("cut_reward.csv", "prompt,completion,reward\np,a,1\np,b,\"not a number, cut");
  {
    RecordingSink sink;
    rldk::Diagnostics diagnostics;
    ASSERT_TRUE(read_csv(dir.path("cut_reward.csv"), sink, diagnostics).ok());
    ASSERT_EQ(sink.rows_read.size(), 1u);
    EXPECT_TRUE(sink.numeric("reward"));
    EXPECT_EQ(diagnostics.counts().count("non_numeric_cell"), 0u);
  }
  // A cut between rows is no damage.
  dir.write("clean.csv", "prompt,completion,reward\np,\"a\nb\",1\np,c,2");
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("clean.csv"), sink, diagnostics).ok());
  EXPECT_EQ(sink.rows_read.size(), 2u);
  EXPECT_TRUE(diagnostics.empty());
}

TEST(CsvSamples, NumbersAtTheEdges) {
  TempDir dir;
  dir.write("n.csv",
            "completion,reward,flag\n"
            "a,NaN,True\n"
            "b,inf,False\n"
            "c,-Infinity,true\n"
            "d,1e400,false\n"
            "e,123456789012345678901234567890,1\n"
            "f,,0\n"
            "g, 2.5 ,1\n"
            "h,1e-400,0\n");
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("n.csv"), sink, diagnostics).ok());
  ASSERT_EQ(sink.rows_read.size(), 8u);
  EXPECT_TRUE(sink.numeric("reward"));
  EXPECT_TRUE(sink.numeric("flag"));
  EXPECT_TRUE(std::isnan(sink.number(0, "reward")));
  EXPECT_EQ(sink.number(1, "reward"), rldk_test::INF);
  EXPECT_EQ(sink.number(2, "reward"), -rldk_test::INF);
  EXPECT_EQ(sink.number(3, "reward"), rldk_test::INF);
  EXPECT_DOUBLE_EQ(sink.number(4, "reward"), 1.2345678901234568e29);
  EXPECT_EQ(sink.rows_read[5].count("reward"), 0u);  // an empty cell is missing, not 0
  EXPECT_EQ(sink.number(6, "reward"), 2.5);
  EXPECT_EQ(sink.number(7, "reward"), 0.0);
  EXPECT_EQ(sink.number(0, "flag"), 1.0);
  EXPECT_EQ(sink.number(1, "flag"), 0.0);
  EXPECT_TRUE(diagnostics.empty());
}

TEST(CsvSamples, TextInANumericColumnAfterTheFirstBlockIsOneDiagnostic) {
  TempDir dir;
  std::string csv = "prompt,completion,reward\n";
  for (int i = 0; i < 200; ++i) {
    std::string n = std::to_string(i);
    csv += "p" + std::to_string(i % 7) + ",\"answer\n" + n + "\"," + n + ".5\n";  // two lines a row
  }
  csv += "p,\"bad\nrow\",n/a\n";  // lines 402-403
  csv += "p,after,7\n";
  dir.write("late.csv", csv);
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("late.csv"), sink, diagnostics, 256).ok());  // many blocks
  ASSERT_EQ(sink.rows_read.size(), 202u);
  EXPECT_TRUE(sink.numeric("reward"));
  EXPECT_EQ(sink.number(199, "reward"), 199.5);
  EXPECT_EQ(sink.text(199, "completion"), "answer\n199");
  EXPECT_FALSE(sink.rows_read[200]["reward"].number);
  EXPECT_EQ(sink.number(201, "reward"), 7);
  rldk::Diagnostic bad = first(diagnostics, "non_numeric_cell");
  EXPECT_EQ(bad.line, 402u);
  EXPECT_NE(bad.message.find("'n/a'"), std::string::npos);
  EXPECT_EQ(diagnostics.counts().size(), 1u);
}

TEST(CsvSamples, RecordLongerThanABlockIsReadWhole) {
  TempDir dir;
  std::string long_text(5000, 'x');
  for (size_t i = 100; i < long_text.size(); i += 100) long_text[i] = '\n';
  std::string csv = "prompt,completion,reward\np,short,1\np,\"" + long_text + "\",2\np,ragged\np,end,3\n";
  dir.write("long.csv", csv);
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("long.csv"), sink, diagnostics, 64).ok());
  ASSERT_EQ(sink.rows_read.size(), 3u);  // each row once, although the file is read again with larger blocks
  EXPECT_EQ(sink.text(1, "completion"), long_text);
  EXPECT_EQ(sink.number(2, "reward"), 3);
  EXPECT_EQ(diagnostics.counts().at("ragged_row"), 1u);  // reported once
  EXPECT_EQ(first(diagnostics, "ragged_row").line, 53u);
}

TEST(CsvSamples, NonUtf8BytesPassThrough) {
  TempDir dir;
  dir.write("latin1.csv", "prompt,completion,reward\nq,caf\xe9 \xff\xfe,1\n");
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(read_csv(dir.path("latin1.csv"), sink, diagnostics).ok());
  ASSERT_EQ(sink.rows_read.size(), 1u);
  EXPECT_EQ(sink.text(0, "completion"), "caf\xe9 \xff\xfe");
}

TEST(CsvSamples, SeparatorsCompressionAndPandasIndex) {
  TempDir dir;
  // pandas' to_csv writes its index as an unnamed first column: row numbers, not a reward.
  std::string csv = ",prompt,completion,score\n0,p,\"a\tb\",0.5\n1,p,c,0.25\n";
  dir.write("scores.csv.gz", gzip(dir, csv));
  std::string tsv = "prompt\tcompletion\tscore\np\t\"a,b\"\t0.5\n";
  dir.write("scores.tsv", tsv);
  dir.write("semicolons.txt", "prompt;completion;score\np;\"a,b\";0.5\n");
  {
    RecordingSink sink;
    rldk::Diagnostics diagnostics;
    ASSERT_TRUE(read_csv(dir.path("scores.csv.gz"), sink, diagnostics).ok());
    ASSERT_EQ(sink.rows_read.size(), 2u);
    EXPECT_FALSE(sink.numeric(""));
    EXPECT_TRUE(sink.numeric("score"));
    EXPECT_EQ(sink.text(0, "completion"), "a\tb");
  }
  for (const char* name : {"scores.tsv", "semicolons.txt"}) {
    RecordingSink sink;
    rldk::Diagnostics diagnostics;
    ASSERT_TRUE(rldk::samples::read_table(dir.path(name), sink, diagnostics).ok()) << name;
    ASSERT_EQ(sink.rows_read.size(), 1u) << name;
    EXPECT_EQ(sink.text(0, "completion"), "a,b") << name;
    EXPECT_EQ(sink.number(0, "score"), 0.5) << name;
  }
  EXPECT_EQ(rldk::samples::sniff_csv_delimiter("a\tb,c\td", "x.csv"), '\t');
  EXPECT_EQ(rldk::samples::sniff_csv_delimiter("one_column", "x.tsv"), '\t');
  EXPECT_EQ(rldk::samples::sniff_csv_delimiter("\"a,b,c\";d", "x.csv"), ';');
}

TEST(CsvSamples, FolderReadsCsvFilesInStepOrderBesideJsonl) {
  TempDir dir;
  dir.write("scores/step_10.csv", "prompt,completion,reward\np,ten,1\n");
  dir.write("scores/step_2.csv.gz", gzip(dir, "prompt,completion,reward\np,two,1\n"));
  dir.write("scores/step_5.jsonl", "{\"prompt\": \"p\", \"completion\": \"five\", \"reward\": 1}\n");
  dir.write("scores/notes.md", "not samples");
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(rldk::samples::read_table(dir.path("scores"), sink, diagnostics).ok());
  ASSERT_EQ(sink.rows_read.size(), 3u);
  EXPECT_EQ(sink.text(0, "completion"), "two");
  EXPECT_EQ(sink.text(1, "completion"), "five");
  EXPECT_EQ(sink.text(2, "completion"), "ten");
  EXPECT_EQ(sink.files[0].step, 2);
  EXPECT_EQ(sink.files[1].format, "jsonl");
}

namespace {

// A table file as wandb 0.31 writes one for wandb.log({"completions": wandb.Table(dataframe=df)}) from TRL.
const char* TRL_TABLE =
    "{\"columns\":[\"step\",\"prompt\",\"completion\",\"reward_len\",\"advantage\"],\"data\":["
    "[12,[{\"role\":\"user\",\"content\":\"hi?\"}],[{\"role\":\"assistant\",\"content\":\"hello\\nthere\"}],1.5,0.25],"
    "[12,[{\"role\":\"user\",\"content\":\"yo\"}],[{\"role\":\"assistant\",\"content\":\"x\"}],Infinity,NaN]]}";

}  // namespace

TEST(WandbTables, ReadsTrlCompletionsTablesOfARunFolder) {
  TempDir dir;
  std::string run = "proj/wandb/offline-run-20260101_120000-abcd1234/";
  dir.write(run + "files/media/table/completions_7_0123456789abcdef0123.table.json", TRL_TABLE);
  dir.write(run + "files/media/table/completions_3_99999999999999999999.table.json",
            "{\"columns\":[\"prompt\",\"completion\",\"reward\",\"step\"],\"data\":[[\"q\",\"a\",0.5,\"4\"]]}");
  dir.write(run + "files/media/table/eval_3_11111111111111111111.table.json",
            "{\"columns\":[\"x\"],\"data\":[[1]]}");
  dir.write(run + "files/wandb-summary.json", "{\"loss\": 1}");
  dir.write("proj/wandb/offline-run-20250101_120000-old00000/files/media/table/completions_1_2.table.json",
            "{\"columns\":[\"completion\"],\"data\":[[\"old run\"]]}");
  for (const std::string& path : {dir.path("proj"), dir.path("proj/wandb"), dir.path(run), dir.path(run + "files")}) {
    RecordingSink sink;
    rldk::Diagnostics diagnostics;
    ASSERT_TRUE(rldk::samples::read_table(path, sink, diagnostics).ok()) << path;
    ASSERT_EQ(sink.files.size(), 2u) << path;  // the completions tables of the newest run, not eval_*
    EXPECT_EQ(sink.files[0].format, "wandb table");
    EXPECT_EQ(sink.files[0].step, 3);  // W&B's step in the name orders the tables
    ASSERT_EQ(sink.rows_read.size(), 3u);
    EXPECT_EQ(sink.number(0, "step"), 4);  // a step written as text still reads as a number
    EXPECT_EQ(sink.text(0, "step"), "4");
    EXPECT_EQ(sink.text(1, "prompt"), "hi?");
    EXPECT_EQ(sink.text(1, "completion"), "hello\nthere");
    EXPECT_EQ(sink.number(1, "step"), 12);
    EXPECT_EQ(sink.number(2, "reward_len"), rldk_test::INF);
    EXPECT_TRUE(std::isnan(sink.number(2, "advantage")));
    EXPECT_TRUE(sink.numeric("reward_len"));
    EXPECT_FALSE(sink.numeric("completion"));
    if (path.find("offline-run") == std::string::npos) {
      EXPECT_EQ(first(diagnostics, "wandb_runs").message.find("2 W&B runs"), 0u) << path;
    }
  }
}

TEST(WandbTables, ParquetCompletionsWinOverTablesAndDamageIsSkippedWhole) {
  TempDir dir;
  dir.write("out/completions/completions_00001.jsonl", "{\"prompt\": \"p\", \"completion\": \"c\", \"r\": 1}\n");
  dir.write("out/completions/completions_00002.parquet", "PAR1 not really");  // named as TRL names them
  dir.write("out/wandb/run-20260101_120000-abcd1234/files/media/table/completions_1_ab.table.json", TRL_TABLE);
  RecordingSink sink;
  rldk::Diagnostics diagnostics;
  ASSERT_TRUE(rldk::samples::read_table(dir.path("out"), sink, diagnostics).ok());
  EXPECT_EQ(sink.files[0].format, "jsonl");
  EXPECT_NE(first(diagnostics, "wandb_tables_skipped").message.find("read the Parquet"), std::string::npos);

  // A table cut while W&B wrote it is an error with its path; none of its rows reach the sink.
  std::string cut(TRL_TABLE);
  cut.resize(cut.size() - 30);
  dir.write("cut/completions_1_ab.table.json", cut);
  RecordingSink cut_sink;
  rldk::Diagnostics cut_diagnostics;
  auto read = rldk::samples::read_wandb_table_samples(dir.path("cut/completions_1_ab.table.json"), cut_sink,
                                                      cut_diagnostics);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("malformed W&B table"), std::string::npos);
  EXPECT_TRUE(cut_sink.rows_read.empty());

  // A ragged row is read as far as the columns go, and said.
  dir.write("ragged/x_0_ab.table.json", "{\"columns\":[\"completion\",\"r\"],\"data\":[[\"a\"],[\"b\",1,2]]}");
  RecordingSink ragged;
  rldk::Diagnostics ragged_diagnostics;
  ASSERT_TRUE(
      rldk::samples::read_wandb_table_samples(dir.path("ragged/x_0_ab.table.json"), ragged, ragged_diagnostics).ok());
  ASSERT_EQ(ragged.rows_read.size(), 2u);
  EXPECT_EQ(ragged.number(1, "r"), 1);
  EXPECT_EQ(ragged_diagnostics.counts().at("ragged_row"), 2u);
}

TEST(WandbTables, StepFromTheFileName) {
  using rldk::samples::wandb_table_step;
  EXPECT_EQ(wandb_table_step("a/completions_12_0123456789abcdef9876.table.json"), 12);
  EXPECT_EQ(wandb_table_step("eval_completions_0_ff.table.json"), 0);
  EXPECT_EQ(wandb_table_step("completions.table.json"), std::nullopt);
  EXPECT_EQ(wandb_table_step("completions_x_ff.table.json"), std::nullopt);
  EXPECT_EQ(wandb_table_step("completions_1_ff.json"), std::nullopt);
}
