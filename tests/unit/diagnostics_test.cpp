// Diagnostics: exact counts, bounded examples, merging (include/rldk/diagnostics.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/result.h"

namespace {

using rldk::Diagnostic;
using rldk::Diagnostics;

constexpr uint64_t CAP = Diagnostics::EXAMPLES_PER_KIND;

Diagnostic d(const std::string& kind, uint64_t line) { return Diagnostic{kind, "f.jsonl", line, kind + " here"}; }

// "kind:line" of each example, in order.
std::vector<std::string> examples_of(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const auto& e : diags.examples()) out.push_back(e.kind + ":" + std::to_string(e.line));
  return out;
}

TEST(Diagnostics, EmptyByDefault) {
  Diagnostics diags;
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(diags.total(), 0u);
  EXPECT_TRUE(diags.counts().empty());
  EXPECT_TRUE(diags.examples().empty());
}

TEST(Diagnostics, CountsAreExactAndExamplesCappedPerKind) {
  Diagnostics diags;
  const uint64_t many = 1000;
  for (uint64_t i = 1; i <= many; ++i) diags.add(d("malformed_json", i));
  for (uint64_t i = 1; i <= 3; ++i) diags.add(d("bad_step", 100 + i));
  EXPECT_FALSE(diags.empty());
  EXPECT_EQ(diags.total(), many + 3);
  EXPECT_EQ(diags.counts().at("malformed_json"), many);
  EXPECT_EQ(diags.counts().at("bad_step"), 3u);
  ASSERT_EQ(diags.examples().size(), CAP + 3);
  // The first examples of each kind, in the order they were found.
  std::vector<std::string> expected;
  for (uint64_t i = 1; i <= CAP; ++i) expected.push_back("malformed_json:" + std::to_string(i));
  for (uint64_t i = 1; i <= 3; ++i) expected.push_back("bad_step:" + std::to_string(100 + i));
  EXPECT_EQ(examples_of(diags), expected);
}

TEST(Diagnostics, InterleavedKinds) {
  Diagnostics diags;
  for (uint64_t i = 1; i <= 20; ++i) diags.add(d(i % 2 ? "a" : "b", i));
  EXPECT_EQ(diags.counts().at("a"), 10u);
  EXPECT_EQ(diags.counts().at("b"), 10u);
  EXPECT_EQ(examples_of(diags), (std::vector<std::string>{"a:1", "b:2", "a:3", "b:4", "a:5", "b:6", "a:7", "b:8",
                                                          "a:9", "b:10"}));
}

TEST(Diagnostics, MergeAddsCountsAndKeepsTheCap) {
  Diagnostics first, second;
  for (uint64_t i = 1; i <= 3; ++i) first.add(d("a", i));
  for (uint64_t i = 11; i <= 14; ++i) second.add(d("a", i));
  second.add(d("b", 20));
  first.merge(second);
  EXPECT_EQ(first.counts().at("a"), 7u);
  EXPECT_EQ(first.counts().at("b"), 1u);
  EXPECT_EQ(first.total(), 8u);
  EXPECT_EQ(examples_of(first), (std::vector<std::string>{"a:1", "a:2", "a:3", "a:11", "a:12", "b:20"}));
  // The merged-from side is unchanged.
  EXPECT_EQ(second.total(), 5u);
  EXPECT_EQ(second.examples().size(), 5u);
}

TEST(Diagnostics, MergeIntoEmptyAndFromEmpty) {
  Diagnostics source;
  for (uint64_t i = 1; i <= 8; ++i) source.add(d("a", i));
  Diagnostics target;
  target.merge(source);
  EXPECT_EQ(target.counts(), source.counts());
  EXPECT_EQ(examples_of(target), examples_of(source));
  Diagnostics empty;
  target.merge(empty);
  EXPECT_EQ(target.total(), 8u);
  EXPECT_EQ(target.examples().size(), CAP);
}

TEST(Diagnostics, MergeKeepsTheOrderExamplesWereFound) {
  Diagnostics first, second;
  first.add(d("x", 1));
  second.add(d("z", 2));
  second.add(d("a", 3));
  first.merge(second);
  EXPECT_EQ(examples_of(first), (std::vector<std::string>{"x:1", "z:2", "a:3"}));
}

TEST(Diagnostics, ToString) {
  EXPECT_EQ(rldk::to_string(Diagnostic{"k", "f.jsonl", 3, "bad"}), "f.jsonl:3: bad");
  EXPECT_EQ(rldk::to_string(Diagnostic{"k", "f.jsonl", 0, "bad"}), "f.jsonl: bad");
  EXPECT_EQ(rldk::to_string(Diagnostic{"k", "", 0, "bad"}), "bad");
  EXPECT_EQ(rldk::to_string(rldk::Error{rldk::ErrorCode::io, "cannot write", "out.json"}), "out.json: cannot write");
  EXPECT_EQ(rldk::to_string(rldk::Error{rldk::ErrorCode::io, "cannot write", ""}), "cannot write");
}

}  // namespace
