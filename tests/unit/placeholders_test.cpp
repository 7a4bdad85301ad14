// The placeholder expander of rule actions: each context's escape, with hostile values (issue 12, items 7 and 8).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "rldk/placeholders.h"
#include "test_support.h"

namespace rldk {
namespace {
namespace fs = std::filesystem;

Alert alert_with_run(const std::string& run_id) {
  Alert a;
  a.rule_id = "kl_spike";
  a.run_id = run_id;
  a.metric = "policy/kl";
  a.step = 42;
  a.value = 0.30512;
  return a;
}

std::string expand(const std::string& t, const Alert& a, EscapeContext c) {
  auto r = expand_placeholders(t, a, c);
  EXPECT_TRUE(r.ok()) << t;
  return r.ok() ? r.value() : "";
}

// What /bin/sh prints for `printf %s WORDS`: the words it actually parsed.
std::string sh_printf(const std::string& words) {
  std::string cmd = "printf %s " + words;
  std::string quoted = shell_single_quote(cmd);
  FILE* p = ::popen(("/bin/sh -c " + quoted).c_str(), "r");
  std::string out;
  char buffer[256];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, p)) > 0) out.append(buffer, n);
  ::pclose(p);
  return out;
}

const char* HOSTILE[] = {"../../../../tmp/x", "x'; touch /tmp/p; echo '", "x\"; touch p; \"", "$(touch p)",
                         "`touch p`", "..", ".", "", "a/b", "esc\x1b]0;t\x07", "new\nline", "back\\slash", "'",
                         "''\\''"};

TEST(Placeholders, TextMatchesAlertMessages) {
  Alert a = alert_with_run("run-1");
  EXPECT_EQ(expand("KL {value:.3f} at step {step} ({rule_id}) {unknown}", a, EscapeContext::text),
            format_alert_message("KL {value:.3f} at step {step} ({rule_id}) {unknown}", a));
  EXPECT_EQ(expand("{value:.0%} of {name} in {run_id}{", a, EscapeContext::text), "31% of policy/kl in run-1{");
}

TEST(Placeholders, PathComponentsAreSanitised) {
  EXPECT_EQ(sanitize_path_component("../../../../tmp/x"), "____________tmp_x");
  EXPECT_EQ(sanitize_path_component(".."), "__");
  EXPECT_EQ(sanitize_path_component("."), "_");
  EXPECT_EQ(sanitize_path_component(""), "_");
  EXPECT_EQ(sanitize_path_component(".hidden"), "_hidden");
  EXPECT_EQ(sanitize_path_component("a..b"), "a__b");
  EXPECT_EQ(sanitize_path_component("v1.2"), "v1.2");
  EXPECT_EQ(sanitize_path_component(std::string("a\0b\x1b\x7f", 5)), "a_b__");
  for (const char* v : HOSTILE) {
    std::string c = sanitize_path_component(v);
    EXPECT_EQ(c.find('/'), std::string::npos) << v;
    EXPECT_NE(c, ".");
    EXPECT_NE(c, "..");
    EXPECT_FALSE(c.empty());
  }
  Alert a = alert_with_run("../../../../tmp/x");
  EXPECT_EQ(expand("runs/{run_id}/STOP", a, EscapeContext::path), "runs/____________tmp_x/STOP");
  // A template's own dot next to a value's dot never makes "..".
  EXPECT_EQ(expand("runs/.{run_id}", alert_with_run("."), EscapeContext::path), "runs/._");
}

TEST(Placeholders, ShellValuesAreLiteralInEveryQuotingState) {
  for (const char* v : HOSTILE) {
    Alert a = alert_with_run(v);
    EXPECT_EQ(sh_printf(expand("{run_id}", a, EscapeContext::shell)), v) << v;
    EXPECT_EQ(sh_printf(expand("'{run_id}'", a, EscapeContext::shell)), v) << v;
    EXPECT_EQ(sh_printf(expand("\"{run_id}\"", a, EscapeContext::shell)), v) << v;
    EXPECT_EQ(sh_printf(expand("pre-{run_id}-post", a, EscapeContext::shell)), std::string("pre-") + v + "-post");
    EXPECT_EQ(sh_printf(expand("\"a $HOME_NOT_SET {run_id}\"", a, EscapeContext::shell)), std::string("a  ") + v);
  }
  EXPECT_EQ(shell_single_quote("it's"), "'it'\\''s'");
}

TEST(Placeholders, ShellSyntaxIsNotAPlaceholderAndUnquotableSpotsAreRefused) {
  Alert a = alert_with_run("$(touch p)");
  EXPECT_EQ(expand("echo ${run_id} \\{run_id}", a, EscapeContext::shell), "echo ${run_id} \\{run_id}");
  for (const char* t : {"echo $(echo {run_id})", "echo `echo {run_id}`", "cat <<EOF\n{run_id}\nEOF",
                        "echo $'{run_id}'", "echo ${x:-{run_id}}", "true # {run_id}", "echo \"$(x) {run_id}\""}) {
    auto r = expand_placeholders(t, a, EscapeContext::shell);
    EXPECT_FALSE(r.ok()) << t;
  }
  // '#' inside a word is no comment.
  EXPECT_TRUE(expand_placeholders("echo a#b {run_id}", a, EscapeContext::shell).ok());
  // Unknown fields after such a construct are fine: nothing is substituted.
  EXPECT_TRUE(expand_placeholders("echo $(date) {unknown}", a, EscapeContext::shell).ok());
}

TEST(Placeholders, ConfinePathKeepsWritesUnderARoot) {
  rldk_test::TempDir dir;
  fs::path base = dir.path();
  fs::path root = base / "out";
  fs::create_directories(root / "runs");
  fs::create_directories(base / "elsewhere");
  fs::create_symlink(base / "elsewhere", root / "link");
  EXPECT_TRUE(confine_path(root / "runs" / "r1" / "STOP", {root}).ok());
  EXPECT_TRUE(confine_path(root / "STOP", {base / "nope", root}).ok());
  EXPECT_FALSE(confine_path(root / ".." / "STOP", {root}).ok());
  EXPECT_FALSE(confine_path(root, {root}).ok());
  EXPECT_FALSE(confine_path("/tmp/x", {root}).ok());
  EXPECT_FALSE(confine_path(root / "link" / "STOP", {root}).ok());  // physically outside
  EXPECT_FALSE(confine_path(root / "link" / "new" / "STOP", {root}).ok());
  EXPECT_FALSE(confine_path(root / "runs" / "STOP", {}).ok());
}

}  // namespace
}  // namespace rldk
