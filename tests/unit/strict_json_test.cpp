// The JSON-lines scanner against simdjson (io/strict_json.h): on every line that is strict JSON, both must give the
// same fields — keys (nested ones joined by '/'), depths, kinds, numbers, strings and the count of skipped lists. The
// lines: every file of the fuzz corpora, the real-log fixtures, and generated records that stress what a hand-written
// scanner gets wrong (escapes, unicode, exponents, 17-digit and 20-digit numbers, nesting, key order that changes
// from line to line, which defeats the scanner's key-layout cache).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "io/lenient_json.h"
#include "io/strict_json.h"

namespace rldk::io {
namespace {

namespace fs = std::filesystem;

std::string describe(const FlatRecord& r) {
  std::ostringstream out;
  out << "lists=" << r.skipped_lists;
  for (const auto& f : r.fields) {
    out << " [" << r.key(f) << " d" << f.depth << " k" << static_cast<int>(f.kind) << " ";
    if (f.kind == ValueKind::string) {
      out << '"' << r.str(f) << '"';
    } else {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.17g", f.number);
      out << buffer;
    }
    out << "]";
  }
  return out.str();
}

struct Tally {
  size_t lines = 0;
  size_t strict = 0;  // lines simdjson accepted, hence compared
};

// Feeds each line to both parsers with one scanner record kept across lines, as a reader keeps it.
void compare_lines(const std::string& text, const std::string& origin, FlatRecord& lenient, Tally& tally) {
  FlatRecord strict;
  size_t begin = 0;
  size_t number = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    ++number;
    ++tally.lines;
    ParseError error;
    const bool lenient_ok = parse_flat_object(line, lenient, error);
    if (parse_strict_flat_object(line, strict)) {
      ++tally.strict;
      EXPECT_TRUE(lenient_ok) << origin << ":" << number << ": simdjson reads it, the scanner says " << error.message;
      if (lenient_ok) {
        EXPECT_TRUE(rldk::io::same_fields(lenient, strict)) << origin << ":" << number << "\n  scanner:  " << describe(lenient)
                                           << "\n  simdjson: " << describe(strict);
      }
    }
    if (end == text.size()) break;
    begin = end + 1;
  }
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(StrictJson, ScannerAgreesWithSimdjsonOnCorporaAndRealLogs) {
  Tally tally;
  size_t files = 0;
  for (const char* folder : {"fuzz/corpus", "tests/fixtures/real", "examples"}) {
    const fs::path root = fs::path(RLDK_SOURCE_DIR) / folder;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.file_size() > (64u << 20)) continue;
      const auto ext = entry.path().extension().string();
      // The corpora are all text-ish; among fixtures, only what holds JSON lines.
      if (std::string(folder) != "fuzz/corpus" && ext != ".jsonl" && ext != ".json" && ext != ".log" && ext != ".txt") {
        continue;
      }
      FlatRecord lenient;
      compare_lines(read_file(entry.path()), entry.path().string(), lenient, tally);
      ++files;
    }
  }
  EXPECT_GT(files, 50u);
  EXPECT_GT(tally.strict, 1000u) << "too few strict-JSON lines compared: " << tally.strict << " of " << tally.lines;
  std::printf("compared %zu strict-JSON lines of %zu in %zu files\n", tally.strict, tally.lines, files);
}

// Records as loggers write them, with the hard parts drawn at random.
std::string generated_line(std::mt19937_64& rng, bool shuffle_keys) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto number = [&]() -> std::string {
    char buffer[64];
    switch (pick(9)) {
      case 0: std::snprintf(buffer, sizeof(buffer), "%.17g", std::ldexp(static_cast<double>(rng() >> 11), -53)); break;
      case 1: std::snprintf(buffer, sizeof(buffer), "%.17g", std::ldexp(static_cast<double>(rng() >> 11), pick(600) - 300)); break;
      case 2: std::snprintf(buffer, sizeof(buffer), "%lld", static_cast<long long>(rng() >> pick(64))); break;
      case 3: std::snprintf(buffer, sizeof(buffer), "-%llu", static_cast<unsigned long long>(rng() >> 1)); break;
      // Up to 20 digits, past what the scanner's 64-bit mantissa holds exactly (simdjson declines integers beyond
      // 64 bits, so longer ones are not compared).
      case 4: std::snprintf(buffer, sizeof(buffer), "%llu", static_cast<unsigned long long>(rng())); break;
      case 5: std::snprintf(buffer, sizeof(buffer), "%.3e", std::ldexp(static_cast<double>(rng() >> 11), -60)); break;
      case 6: std::snprintf(buffer, sizeof(buffer), "%dE+%d", static_cast<int>(pick(100)), static_cast<int>(pick(30))); break;
      case 7: std::snprintf(buffer, sizeof(buffer), "0.%018llu", static_cast<unsigned long long>(rng() % 1000000000000000000ULL)); break;
      default: std::snprintf(buffer, sizeof(buffer), "%.6f", static_cast<double>(pick(2000000)) / 1000.0 - 1000.0); break;
    }
    return buffer;
  };
  auto string = [&]() -> std::string {
    static const char* pieces[] = {"train", "policy/kl", "\\\"quoted\\\"", "tab\\there", "\\u00e9t\\u00e9", "日本語",
                                   "\\ud83d\\ude00", "back\\\\slash", "\\/slash", "", "a b", "\\n"};
    std::string s;
    for (size_t i = 0, n = pick(3) + 1; i < n; ++i) s += pieces[pick(std::size(pieces))];
    return "\"" + s + "\"";
  };
  std::vector<std::string> members = {"\"step\": " + std::to_string(pick(100000)), "\"loss\": " + number(),
                                      "\"policy/kl\": " + number(), "\"phase\": " + string(),
                                      "\"done\": " + std::string(pick(2) ? "true" : "false"), "\"note\": null",
                                      "\"hist\": [1, 2.5, {\"a\": [3]}, \"x\"]",
                                      "\"actor\": {\"entropy\": " + number() + ", \"clip\": {\"frac\": " + number() +
                                          "}, \"empty\": {}}",
                                      string() + ": " + number()};
  if (shuffle_keys) std::shuffle(members.begin(), members.end(), rng);
  std::string line = "{";
  const char* separators[] = {", ", ",", " , "};
  for (size_t i = 0; i < members.size(); ++i) {
    if (i > 0) line += separators[pick(3)];
    line += members[i];
  }
  return line + (pick(4) == 0 ? "}  " : "}");
}

TEST(StrictJson, ScannerAgreesWithSimdjsonOnGeneratedRecords) {
  for (bool shuffle : {false, true}) {
    std::mt19937_64 rng(shuffle ? 7 : 11);
    std::string text;
    for (int i = 0; i < 20000; ++i) text += generated_line(rng, shuffle) + "\n";
    FlatRecord lenient;
    Tally tally;
    compare_lines(text, shuffle ? "generated, keys shuffled" : "generated", lenient, tally);
    EXPECT_GT(tally.strict, 19000u) << tally.strict << " of " << tally.lines;
  }
}

TEST(StrictJson, DeclinesWhatOnlyTheScannerReads) {
  FlatRecord out;
  for (const char* line : {R"({"a": NaN})", R"({'a': 1})", R"({"a": 1e400})", R"({"a": 1,})", R"({"a": 1} x)",
                           R"([1, 2])", "{\"a\": \"\xff\"}", R"({"a": np.float64(0.5)})"}) {
    EXPECT_FALSE(parse_strict_flat_object(line, out)) << line;
  }
  std::string deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_FALSE(parse_strict_flat_object("{\"a\": " + deep + "}", out));
}

}  // namespace
}  // namespace rldk::io
