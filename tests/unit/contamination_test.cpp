// The contamination kernels: tokenizer (UTF-8, CJK, hostile bytes), rolling n-gram hashes, the open-addressing
// table, span merging and verdicts, LSH parameters (methods.md §4.2's table), MinHash, the index file's checks and
// the shard merge.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "contamination/ngram_hash.h"
#include "contamination/ngram_table.h"
#include "contamination/scan_state.h"
#include "rldk/contamination.h"
#include "test_support.h"

namespace ct = rldk::contamination;
using rldk_test::TempDir;

namespace {

std::vector<ct::Word> words_of(std::string_view text, ct::NormalizeOptions o = {}) {
  std::vector<ct::Word> w;
  ct::tokenize(text, o, w);
  return w;
}

// A JSONL line {"question": text}, with the text JSON-escaped (only quotes and backslashes occur here).
std::string line(const std::string& key, const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "{\"" + key + "\": \"" + escaped + "\"}\n";
}

std::string filler(size_t words, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  for (size_t i = 0; i < words; ++i) out += (out.empty() ? "" : " ") + std::string("w") + std::to_string(rng() % 5000);
  return out;
}

}  // namespace

TEST(ContaminationTokenize, LowercasesStripsPunctuationKeepsDigitsAcrossScripts) {
  ct::NormalizeOptions o;
  EXPECT_EQ(ct::normalize("Héllo, WÖRLD! x=42; naïve «café» ΣΟΦΙΑ Москва", o),
            "héllo wörld x 42 naïve café σοφια москва");
  EXPECT_EQ(ct::normalize("我爱你 hello世界", o), "我 爱 你 hello 世 界");
  EXPECT_EQ(ct::normalize("don't  stop\u00a0now\u2014ok", o), "don t stop now ok");  // NBSP and em dash separate
  o.punctuation = ct::Punctuation::keep;
  EXPECT_EQ(ct::normalize("a+b=c.", o), "a + b = c .");
  o = {};
  o.digits = ct::Digits::mask;
  EXPECT_EQ(ct::normalize("x = 12.5, y = 7", o), "x 00 0 y 0");
  o = {};
  o.lowercase = false;
  EXPECT_EQ(ct::normalize("The Cat", o), "The Cat");
}

TEST(ContaminationTokenize, OffsetsPointAtTheOriginalBytes) {
  std::string text = "  Größe: 12 Äpfel ";
  auto w = words_of(text);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(text.substr(w[0].begin, w[0].end - w[0].begin), "Größe");
  EXPECT_EQ(text.substr(w[1].begin, w[1].end - w[1].begin), "12");
  EXPECT_EQ(text.substr(w[2].begin, w[2].end - w[2].begin), "Äpfel");
  // Case and punctuation do not change a word's hash; the word does.
  EXPECT_EQ(words_of("Äpfel!")[0].hash, words_of("äpfel")[0].hash);
  EXPECT_NE(words_of("apfel")[0].hash, words_of("äpfel")[0].hash);
}

TEST(ContaminationTokenize, HostileBytesSeparateWordsAndNeverEscapeTheText) {
  EXPECT_EQ(ct::normalize(std::string("ab\xff\xfe" "cd\xc3"), {}), "ab cd");
  EXPECT_EQ(ct::normalize(std::string("x\xed\xa0\x80y", 6), {}), "x y");  // an encoded surrogate is ill-formed
  EXPECT_EQ(ct::normalize(std::string("a\0b", 3), {}), "a b");
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(rng() % 64, '\0');
    for (auto& c : text) c = static_cast<char>(rng());
    for (const auto& w : words_of(text)) {
      ASSERT_LT(w.begin, w.end);
      ASSERT_LE(w.end, text.size());
    }
  }
}

TEST(ContaminationTokenize, FastAsciiPathAndGeneralPathAgree) {
  // tokenize() takes ASCII words on a fast path; normalize() always runs the general (ICU) path. Their words must be
  // the same: the hashes of a text equal the hashes of its normalised form, word for word.
  std::mt19937 rng(5);
  const std::vector<std::string> pieces = {"Hello", "WORLD", "x1", "42", "café", "naïve", "Ωmega", "—", "...", " ",
                                           "\t", "Straße", "我", "a-b", "ÉCOLE", "don't", "\xff", "aaaaaaaaaaaaaaaaaaaa"
                                           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                           "MiXeD123", "ÀB", "1.5"};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    for (int k = rng() % 12; k >= 0; --k) text += pieces[rng() % pieces.size()] + (rng() % 3 ? " " : "");
    for (ct::NormalizeOptions o : {ct::NormalizeOptions{}, ct::NormalizeOptions{false, ct::Punctuation::keep,
                                                                                  ct::Digits::mask}}) {
      auto direct = words_of(text, o);
      std::string normal = ct::normalize(text, o);
      ct::NormalizeOptions identity{false, o.punctuation, ct::Digits::keep};  // the normal form is already normal
      auto again = words_of(normal, identity);
      ASSERT_EQ(direct.size(), again.size()) << text;
      for (size_t i = 0; i < direct.size(); ++i) ASSERT_EQ(direct[i].hash, again[i].hash) << text;
    }
  }
}

TEST(ContaminationHash, RollingEqualsRecomputingEveryWindow) {
  auto w = words_of(filler(200, 3));
  for (size_t n : {1u, 8u, 13u, 50u}) {
    std::vector<uint64_t> rolled;
    ct::ngram_hashes(w, n, rolled);
    ASSERT_EQ(rolled.size(), w.size() - n + 1);
    for (size_t i = 0; i < rolled.size(); ++i) {
      uint64_t h = 0;
      for (size_t j = 0; j < n; ++j) h = h * ct::ROLLING_BASE + w[i + j].hash;
      ASSERT_EQ(rolled[i], ct::mix_ngram(h, n)) << "n=" << n << " i=" << i;
    }
  }
  // The same words give the same key anywhere; word order and n matter.
  std::vector<uint64_t> a, b, c, d;
  ct::ngram_hashes(words_of("x y the quick brown fox"), 4, a);
  ct::ngram_hashes(words_of("The quick, brown FOX"), 4, b);
  ct::ngram_hashes(words_of("quick the brown fox"), 4, c);
  ct::ngram_hashes(words_of("the quick brown fox"), 3, d);
  EXPECT_EQ(a.back(), b[0]);
  EXPECT_NE(b[0], c[0]);
  EXPECT_NE(b[0], d[0]);
  ct::ngram_hashes(words_of("too short"), 3, a);
  EXPECT_TRUE(a.empty());
}

TEST(ContaminationTable, InsertFindAndGrow) {
  ct::NgramTable table;
  std::mt19937_64 rng(11);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 100000; ++i) keys.push_back(rng() | 1);
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(table.insert(keys[i]), i);
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(table.insert(keys[i]), i);  // no duplicates
  EXPECT_EQ(table.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(table.find(keys[i]), i);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(table.find((rng() << 1) | 0x8000000000000000ULL), ct::NgramTable::MISSING);
  EXPECT_EQ(table.keys_by_slot(), keys);
}

TEST(ContaminationLsh, BandsAndRowsAsDatasketchChoosesThem) {
  // methods.md §4.2, computed with datasketch's objective.
  EXPECT_EQ(ct::lsh_parameters(0.9, 128), std::make_pair(size_t{5}, size_t{25}));
  EXPECT_EQ(ct::lsh_parameters(0.8, 128), std::make_pair(size_t{9}, size_t{13}));
  EXPECT_EQ(ct::lsh_parameters(0.7, 128), std::make_pair(size_t{14}, size_t{9}));
  EXPECT_EQ(ct::lsh_parameters(0.5, 128), std::make_pair(size_t{25}, size_t{5}));
  EXPECT_EQ(ct::lsh_parameters(0.7, 256), std::make_pair(size_t{25}, size_t{10}));
  EXPECT_EQ(ct::lsh_parameters(0.8, 256), std::make_pair(size_t{17}, size_t{15}));
  EXPECT_EQ(ct::lsh_parameters(0.9, 256), std::make_pair(size_t{9}, size_t{28}));
}

TEST(ContaminationMinHash, SignaturesFollowTheDefinition) {
  // 130 permutations: the vector kernel's blocks of 8 and a scalar tail; shingles at the edges of the 32-bit range.
  ct::Permutations p = ct::minhash_permutations(130, 1);
  ASSERT_EQ(p.a.size(), 130u);
  const uint64_t prime = (uint64_t{1} << 61) - 1;
  std::mt19937 rng(9);
  std::vector<uint32_t> shingles{0, 1, 77, 4000000000u, 123456, 0xFFFFFFFFu};
  for (int i = 0; i < 300; ++i) shingles.push_back(rng());
  std::vector<uint32_t> sig;
  ct::minhash_signature(shingles, p, sig);
  for (size_t k = 0; k < 130; ++k) {
    ASSERT_GE(p.a[k], 1u);
    ASSERT_LT(p.a[k], prime);
    uint64_t best = 0xFFFFFFFFu;
    for (uint32_t h : shingles) best = std::min<uint64_t>(best, ((p.a[k] * h + p.b[k]) % prime) & 0xFFFFFFFFu);
    EXPECT_EQ(sig[k], best) << k;
  }
  // The reduction's rare branch (r >= p) with a crafted permutation: a*h + b = 2^61 - 1 + 3 wraps to 2 mod p.
  ct::Permutations edge{{1}, {prime + 2}};
  ct::minhash_signature({0}, edge, sig);
  EXPECT_EQ(sig[0], 2u);
  edge = ct::Permutations{{1, 1, 1, 1, 1, 1, 1, 1}, {prime, prime, prime, prime, prime, prime, prime, prime}};
  ct::minhash_signature({0}, edge, sig);
  for (uint32_t v : sig) EXPECT_EQ(v, 0u);  // x = p exactly: p mod p = 0
  p = ct::minhash_permutations(16, 1);
  ct::minhash_signature({}, p, sig);
  for (uint32_t v : sig) EXPECT_EQ(v, 0xFFFFFFFFu);
  EXPECT_DOUBLE_EQ(ct::exact_jaccard({1, 2, 3, 4}, {3, 4, 5}), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(ct::jaccard_estimate({1, 2, 3, 4}, {1, 2, 0, 4}), 0.75);
}

TEST(ContaminationMinHash, Affine32FollowsDatasketchsDefinition) {
  ct::Permutations p = ct::minhash_permutations(37, 3, ct::MinHashScheme::affine32);
  std::mt19937 rng(4);
  std::vector<uint32_t> shingles{0, 1, 0xFFFFFFFFu};
  for (int i = 0; i < 200; ++i) shingles.push_back(rng());
  std::vector<uint32_t> sig;
  ct::minhash_signature(shingles, p, sig);
  auto fmix32 = [](uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    return h ^ (h >> 16);
  };
  for (size_t k = 0; k < 37; ++k) {
    ASSERT_EQ(p.a[k] % 2, 1u);
    ASSERT_LE(p.a[k], 0xFFFFFFFFu);
    uint32_t best = 0xFFFFFFFFu;
    for (uint32_t h : shingles) {
      best = std::min(best, static_cast<uint32_t>(static_cast<uint32_t>(p.a[k]) * fmix32(h) + p.b[k]));
    }
    EXPECT_EQ(sig[k], best) << k;
  }
}

TEST(ContaminationRule, Gpt3LengthRule) {
  ct::NgramOptions o;
  double p = 0;
  std::vector<size_t> lengths;
  for (size_t i = 1; i <= 100; ++i) lengths.push_back(i);  // 5th percentile (linear) = 5.95
  EXPECT_EQ(ct::gpt3_n(lengths, o, p), 8u);                // clamped up to 8
  EXPECT_NEAR(p, 5.95, 1e-12);
  for (auto& l : lengths) l += 5;                          // 10.95 -> 10
  EXPECT_EQ(ct::gpt3_n(lengths, o, p), 10u);
  for (auto& l : lengths) l += 100;                        // clamped down to 13
  EXPECT_EQ(ct::gpt3_n(lengths, o, p), 13u);
}

class ContaminationCheck : public ::testing::Test {
 protected:
  // Training: a verbatim copy of eval item 0 inside other text, half of item 1, and a boilerplate sentence in 12
  // documents that item 2 also holds; item 3 is clean.
  void SetUp() override {
    items = {filler(40, 1), filler(40, 2), "this sentence is boilerplate that appears in many many documents of "
                                           "the web " + filler(30, 3), filler(40, 4)};
    std::string train;
    train += line("text", filler(30, 10) + " " + items[0] + " " + filler(30, 11));
    auto w = words_of(items[1]);
    train += line("text", filler(5, 12) + " " + items[1].substr(0, w[19].end));
    for (int i = 0; i < 12; ++i) {
      train += line("text", filler(20, 20 + i) + " this sentence is boilerplate that appears in many many documents "
                            "of the web " + filler(10, 40 + i));
    }
    train_path = dir.write("train.jsonl", train);
    std::string eval;
    for (const auto& t : items) eval += line("question", t);
    eval_path = dir.write("eval.jsonl", eval);
  }

  ct::Report run(ct::CheckOptions o) {
    rldk::Diagnostics d;
    auto set = ct::read_eval_set(eval_path, o.columns, d);
    EXPECT_TRUE(set.ok());
    auto r = ct::check({train_path}, {set.value()}, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : rldk::to_string(r.error()));
    return std::move(r).value();
  }

  TempDir dir;
  std::vector<std::string> items;
  std::string train_path, eval_path;
};

TEST_F(ContaminationCheck, VerdictsSpansAndBoilerplate) {
  ct::CheckOptions o;
  o.threads = 1;
  ct::Report r = run(o);
  ASSERT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.summaries[0].n, 13u);  // every item is 40+ words
  const auto& full = r.items[0].texts[0];
  EXPECT_EQ(r.items[0].verdict, ct::Verdict::full);
  ASSERT_EQ(full.ngram.spans.size(), 1u);
  EXPECT_EQ(full.ngram.spans[0].begin, 0u);
  EXPECT_EQ(full.ngram.spans[0].end, items[0].size());
  EXPECT_EQ(full.ngram.spans[0].train.doc.row, 0u);
  EXPECT_EQ(full.ngram.spans[0].train.word_offset, 30u);  // after 30 filler words
  EXPECT_DOUBLE_EQ(full.llama2.fraction, 1.0);
  EXPECT_EQ(full.llama2.category, "dirty");
  EXPECT_EQ(full.minhash.verdict, ct::Verdict::clean);  // a 40-word item inside 100 words: Jaccard well below 0.8
  const auto& half = r.items[1].texts[0];
  EXPECT_EQ(r.items[1].verdict, ct::Verdict::partial);
  ASSERT_EQ(half.ngram.spans.size(), 1u);
  EXPECT_EQ(half.ngram.spans[0].words, 20u);
  EXPECT_EQ(half.ngram.covered, 20u);
  EXPECT_EQ(half.ngram.spans[0].train.doc.row, 1u);
  EXPECT_EQ(half.llama2.contaminated, 20u);
  EXPECT_EQ(r.items[2].verdict, ct::Verdict::clean);  // its shared sentence is in 12 > 10 documents
  EXPECT_GT(r.boilerplate_ngrams, 0u);
  EXPECT_EQ(r.items[3].verdict, ct::Verdict::clean);
  // With a higher cut-off the boilerplate sentence counts.
  o.ngram.boilerplate_docs = 20;
  EXPECT_EQ(run(o).items[2].verdict, ct::Verdict::partial);
}

TEST_F(ContaminationCheck, SameReportForAnyThreadCountAndAnySplit) {
  ct::CheckOptions o;
  o.threads = 1;
  std::string one = ct::report_json(run(o)).dump();
  o.threads = 3;
  o.chunk_bytes = 64;  // many chunks, spread over the workers
  EXPECT_EQ(ct::report_json(run(o)).dump(), one);
  // Split the training file in two and merge the shards' partials.
  std::string all = rldk_test::read_file(train_path);
  size_t cut = all.find('\n', all.size() / 2) + 1;
  std::string a = dir.write("shards/a.jsonl", all.substr(0, cut)), b = dir.write("shards/b.jsonl", all.substr(cut));
  rldk::Diagnostics d;
  ct::EvalSet set = ct::read_eval_set(eval_path, o.columns, d).value();
  auto pa = ct::check_shard({a}, 0, {set}, o), pb = ct::check_shard({b}, 1, {set}, o);
  ASSERT_TRUE(pa.ok() && pb.ok());
  auto merged = ct::merge_shards({dir.path("shards")}, {set}, {pa.value(), pb.value()}, o);
  ASSERT_TRUE(merged.ok());
  auto whole = ct::check({dir.path("shards")}, {set}, o);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(ct::report_json(merged.value()).dump(), ct::report_json(whole.value()).dump());
  // A partial made for other eval sets is refused.
  EXPECT_FALSE(ct::merge_shards({a}, {set}, {pa.value().substr(0, 20)}, o).ok());
}

TEST_F(ContaminationCheck, IndexRoundTripAndRefusals) {
  ct::CheckOptions o;
  o.threads = 1;
  std::string idx = dir.path("train.idx");
  auto info = ct::build_index({train_path}, {13, 11}, o, idx);
  ASSERT_TRUE(info.ok());
  rldk::Diagnostics d;
  ct::EvalSet set = ct::read_eval_set(eval_path, o.columns, d).value();
  auto via_index = ct::check_index(idx, {set}, o);
  ASSERT_TRUE(via_index.ok());
  ct::Report direct = run(o);
  for (size_t i = 0; i < direct.items.size(); ++i) {
    EXPECT_EQ(via_index->items[i].verdict, direct.items[i].verdict) << i;
    EXPECT_EQ(via_index->items[i].texts[0].ngram.covered, direct.items[i].texts[0].ngram.covered) << i;
  }
  std::string bytes = rldk_test::read_file(idx);
  EXPECT_TRUE(ct::parse_index(bytes).ok());
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  auto e = ct::parse_index(flipped);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("checksum"), std::string::npos);
  std::string old = bytes;
  old[8] = 0;  // version 0
  e = ct::parse_index(old);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("version"), std::string::npos);
  EXPECT_FALSE(ct::parse_index(bytes.substr(0, bytes.size() - 3)).ok());
  EXPECT_FALSE(ct::parse_index("RLDKCIDX").ok());
  EXPECT_FALSE(ct::check_index(dir.write("junk.idx", "not an index"), {set}, o).ok());
}
