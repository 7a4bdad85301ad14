// Output that cannot destroy input or inject into a terminal or a Markdown page: the output guard, atomic files,
// compressed outputs, the terminal filter and the Markdown escapes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/markdown_text.h"
#include "rldk/output_file.h"
#include "rldk/reader.h"
#include "rldk/terminal_text.h"
#include "test_support.h"

namespace fs = std::filesystem;
using rldk_test::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(OutputGuard, RefusesTheInputItselfByAnyName) {
  TempDir dir;
  std::string input = dir.write("a.jsonl", "{\"step\":1,\"x\":1}\n");
  fs::create_symlink(input, dir.path("link.jsonl"));
  fs::create_hard_link(input, dir.path("hard.jsonl"));
  for (std::string out : {input, dir.path("link.jsonl"), dir.path("hard.jsonl"), dir.path("./a.jsonl"),
                          dir.path("sub/../a.jsonl")}) {
    fs::create_directories(dir.path("sub"));
    auto status = rldk::check_output_outside_inputs(out, {input});
    ASSERT_FALSE(status.ok()) << out;
    EXPECT_EQ(status.error().code, rldk::ErrorCode::invalid_argument);
    EXPECT_NE(status.error().message.find("is the input"), std::string::npos);
  }
  EXPECT_EQ(slurp(input), "{\"step\":1,\"x\":1}\n");
  EXPECT_TRUE(rldk::check_output_outside_inputs(dir.path("b.jsonl"), {input}).ok());
  EXPECT_TRUE(rldk::check_output_outside_inputs("-", {input}).ok());
}

TEST(OutputGuard, RefusesAnOutputInsideAnInputFolderEvenThroughALink) {
  TempDir dir;
  dir.write("runs/a.jsonl", "{\"step\":1,\"x\":1}\n");
  fs::create_symlink(dir.path("runs"), dir.path("alias"));
  for (std::string out : {dir.path("runs/out.jsonl"), dir.path("runs/new/deeper/out.jsonl"),
                          dir.path("alias/out.jsonl")}) {
    auto status = rldk::check_output_outside_inputs(out, {dir.path("runs")});
    ASSERT_FALSE(status.ok()) << out;
    EXPECT_NE(status.error().message.find("inside the input folder"), std::string::npos);
  }
  EXPECT_TRUE(rldk::check_output_outside_inputs(dir.path("out.jsonl"), {dir.path("runs")}).ok());
  EXPECT_TRUE(rldk::check_output_outside_inputs(dir.path("runs2/out.jsonl"), {dir.path("runs")}).ok());
}

TEST(AtomicFile, ReplacesWholeAndKeepsPermissions) {
  TempDir dir;
  std::string path = dir.write("report.json", "old");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_TRUE(rldk::write_file_atomic(path, std::string("new\0text", 8)).ok());
  EXPECT_EQ(slurp(path), std::string("new\0text", 8));
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);  // no temp left
  EXPECT_FALSE(rldk::write_file_atomic(dir.path("missing/report.json"), "x").ok());
}

TEST(AtomicFile, AnUncommittedStreamLeavesTheOldFile) {
  TempDir dir;
  std::string path = dir.write("out.jsonl", "old\n");
  {
    auto out = rldk::AtomicOutputFile::open(path);
    ASSERT_TRUE(out.ok());
    std::fputs("half of the new", out->stream());
  }
  EXPECT_EQ(slurp(path), "old\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(AtomicFile, CompressesByExtensionAndReadsBack) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"step\":" + std::to_string(i) + ",\"loss\":" + std::to_string(i % 7) + "}\n";
  for (std::string name : {"run.jsonl.gz", "run.jsonl.zst"}) {
    auto out = rldk::AtomicOutputFile::open(dir.path(name));
    ASSERT_TRUE(out.ok());
    std::fwrite(text.data(), 1, text.size(), out->stream());
    ASSERT_TRUE(out->commit().ok());
    EXPECT_LT(fs::file_size(dir.path(name)), text.size() / 4) << name;
    rldk::ReadOptions raw;
    raw.canonicalize = false;
    auto runs = rldk::read_runs(dir.path(name), raw);
    ASSERT_TRUE(runs.ok() && runs->size() == 1) << name;
    const rldk::Series* loss = runs->front().find("loss");
    ASSERT_NE(loss, nullptr) << name;
    EXPECT_EQ(loss->size(), 20000u) << name;
  }
}

TEST(TerminalText, EscapesControlsAndInvalidUtf8Only) {
  EXPECT_EQ(rldk::terminal_safe("plain\ttext, ünïcødé ✓\n"), "plain\ttext, ünïcødé ✓\n");
  EXPECT_EQ(rldk::terminal_safe("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(rldk::terminal_safe(std::string("a\0b\r\x7f", 5)), "a\\x00b\\x0d\\x7f");
  EXPECT_EQ(rldk::terminal_safe("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI
  EXPECT_EQ(rldk::terminal_safe("\xff\xfe ok \xe2\x82"), "\\xff\\xfe ok \\xe2\\x82");
}

TEST(TerminalText, StreamingKeepsCharactersSplitAcrossPieces) {
  std::string text = "μ=0.5 ✓ \x1b[2J \xf0\x9f\x98\x80 end";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    rldk::TerminalFilter filter;
    std::string out = filter.feed(text.substr(0, cut));
    out += filter.feed(text.substr(cut));
    out += filter.finish();
    EXPECT_EQ(out, rldk::terminal_safe(text)) << cut;
  }
  rldk::TerminalFilter cut_short;
  std::string out = cut_short.feed("ok \xe2\x82");
  EXPECT_EQ(out + cut_short.finish(), "ok \\xe2\\x82");
}

TEST(MarkdownText, DataCannotBecomeMarkup) {
  EXPECT_EQ(rldk::md_text("<script>alert(1)</script>"), "\\<script\\>alert(1)\\</script\\>");
  EXPECT_EQ(rldk::md_text("[x](javascript:y) | *b*\nnext"), "\\[x\\](javascript:y) \\| \\*b\\* next");
  EXPECT_EQ(rldk::md_text("reward_mean"), "reward_mean");
  EXPECT_EQ(rldk::md_text("\x1b[2J"), "\\\\x1b\\[2J");
  EXPECT_EQ(rldk::md_code("run-1"), "`run-1`");
  EXPECT_EQ(rldk::md_code("a`b"), "``a`b``");
  EXPECT_EQ(rldk::md_code("`x``"), "``` `x`` ```");
  EXPECT_EQ(rldk::md_code("a|b\nc"), "`a\\|b c`");
}
