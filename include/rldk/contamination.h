// Train/eval contamination: do eval items (or their reference answers) sit in the training data, verbatim, lightly
// edited or as near-duplicates? (`rldk contamination`, docs/contamination.md, methods.md §4)
//
// Three established methods over one Unicode-aware word tokenizer with explicit normalisation:
//   ngram   GPT-3's benchmark-overlap rule: N = the eval set's 5th-percentile length in words, clamped to [8, 13];
//           an eval text is contaminated on any N-gram it shares with a training document, n-grams found in more
//           than K training documents are boilerplate and ignored (K = 10, as GPT-3 and lm-eval-harness's janitor).
//   llama2  Llama 2's token-level rule: a token is contaminated when it lies in an n-gram of more than 10 tokens
//           found in both the eval text and the training data; the text's contaminated fraction decides clean (< 20 %)
//           or dirty (> 80 %). Matched spans with a few differing tokens between them are joined (skip-gram budget).
//   minhash near-duplicates: MinHash signatures over word shingles with datasketch's permutations, LSH bands chosen
//           from the threshold by datasketch's objective, every candidate confirmed by exact Jaccard.
//
// The eval side is small and indexed; the training corpus is streamed once, in chunks of documents spread over all
// cores, so memory is the eval index plus a bounded queue of chunks, whatever the corpus size. A persistent index
// of training n-grams (`rldk contamination index`) turns it around: built once, checked by many eval sets.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/json.h"
#include "rldk/result.h"

namespace rldk::contamination {

inline constexpr const char* CONTAMINATION_SCHEMA = "rldk.contamination/v1";

// ---- normalisation and words ----

enum class Punctuation { strip, keep };  // strip: punctuation separates words and is dropped; keep: each mark a word
enum class Digits { keep, mask };        // mask: every digit reads as 0, so "x = 12" and "x = 47" match

// lm-eval-harness's janitor lower-cases and deletes string.punctuation; GPT-3 ignores punctuation, whitespace and
// case; GPT-4 keeps digits (numbers are the answer in math). These defaults follow all three.
struct NormalizeOptions {
  bool lowercase = true;
  Punctuation punctuation = Punctuation::strip;
  Digits digits = Digits::keep;
};

// One word of a text: its bytes [begin, end) in the original text and the 64-bit hash of its normalised form.
struct Word {
  uint32_t begin = 0, end = 0;
  uint64_t hash = 0;
};

// Splits UTF-8 text into words: runs of letters, digits and marks, split at whitespace and punctuation (Unicode
// categories, via ICU); each CJK ideograph and kana is a word of its own (those scripts do not space words). A byte
// that is not valid UTF-8 separates words. Texts longer than 4 GiB are cut there (offsets are 32-bit).
void tokenize(std::string_view text, const NormalizeOptions& options, std::vector<Word>& words);
// The normalised words joined by single spaces (what the hashes are computed over, for tests and quotes).
std::string normalize(std::string_view text, const NormalizeOptions& options);

// Rolling hashes of every n consecutive words (Rabin-Karp over the word hashes, mod 2^64, then mixed): out[i] is the
// hash of words[i, i + n). Empty when there are fewer than n words.
void ngram_hashes(const std::vector<Word>& words, size_t n, std::vector<uint64_t>& out);

// ---- inputs ----

// Where a text comes from: file (index into the run's file list), row (0-based) and field (index into the field
// names). Ordered, so "the first training document" is the same however the corpus is split across threads or nodes.
struct DocRef {
  uint32_t file = 0;
  uint32_t field = 0;
  uint64_t row = 0;
  friend bool operator==(const DocRef&, const DocRef&) = default;
  friend bool operator<(const DocRef& a, const DocRef& b) {
    return a.file != b.file ? a.file < b.file : a.row != b.row ? a.row < b.row : a.field < b.field;
  }
};

// Which columns hold text. Empty `columns`: the prompt-like and answer-like names of RL and SFT data (see
// DEFAULT_TEXT_COLUMNS); for RL data both the prompt and the reference answer are checked. Nested JSON fields are
// named with '/', as the readers flatten them: reward_model/ground_truth.
struct TextColumns {
  std::vector<std::string> columns;
};
extern const std::vector<std::string> DEFAULT_TEXT_COLUMNS;

// A text cell with the rest of its row, as read from an eval file.
struct EvalText {
  uint32_t field = 0;  // index into EvalSet::fields
  std::string text;
};
struct EvalItem {
  uint64_t row = 0;                // 0-based row of its file
  uint32_t file = 0;               // index into EvalSet::files
  std::vector<EvalText> texts;     // the checked fields of the row
  std::string record;              // the whole row as one JSON object (written to clean.jsonl / dirty.jsonl)
};
struct EvalSet {
  std::string source;              // the path given
  std::vector<std::string> files;  // files read under it
  std::vector<std::string> fields; // text column names
  std::vector<EvalItem> items;
};

// Reads an eval file or folder (JSONL, CSV, Parquet, W&B tables; a .txt file is one item per line). Rows without
// any text column are counted in `diagnostics` (file:row) and skipped.
Result<EvalSet> read_eval_set(const std::string& path, const TextColumns& columns, Diagnostics& diagnostics);

// A training document handed to the scan: a text and where it came from.
struct TrainDoc {
  DocRef ref;
  std::string_view text;
};
// Streams the training documents of `paths` (same formats; a .txt file is one document per line) in DocRef order to
// `on_doc`; `first_file` numbers the files (a shard of a corpus keeps its files' global numbers). The file list is
// appended to `files`, the text field names to `fields` (indices are DocRef::field).
Status read_training(const std::vector<std::string>& paths, uint32_t first_file, const TextColumns& columns,
                     std::vector<std::string>& files, std::vector<std::string>& fields,
                     const std::function<void(const TrainDoc&)>& on_doc, Diagnostics& diagnostics);

// ---- methods and their options ----

struct NgramOptions {
  std::optional<size_t> n;          // unset: GPT-3's rule, per eval set
  size_t min_n = 8, max_n = 13;     // the rule's clamp (GPT-3: "min 8 (non-synthetic), max 13")
  double length_percentile = 5;     // the rule's percentile of eval text lengths in words
  uint32_t boilerplate_docs = 10;   // n-grams in more than this many training documents are ignored (K)
  double full_coverage = 0.8;       // an eval text whose words are this much covered by matched n-grams is "full"
};

struct Llama2Options {
  size_t min_tokens = 11;           // "n-grams > 10 tokens"
  size_t skip_budget = 4;           // mismatched tokens allowed inside one matched span
  size_t exact_prefix = 10;         // no mismatch in a span's first 10 tokens
  double clean_below = 0.2, dirty_above = 0.8;
};

// datasketch's permutation schemes. legacy (the only one before datasketch 2.0, methods.md §4.2): a*h + b mod 2^64
// mod (2^61 - 1), truncated to 32 bits. affine32 (datasketch 2.0's default): h' = murmur3 fmix32(h), a*h' + b mod
// 2^32 with odd a; a few times faster (one 32-bit multiply per permutation), the same estimator.
enum class MinHashScheme { legacy, affine32 };
const char* scheme_name(MinHashScheme s);

struct MinHashOptions {
  size_t num_perm = 128;
  MinHashScheme scheme = MinHashScheme::legacy;
  uint64_t seed = 1;                // of the permutations (see minhash_permutations)
  size_t shingle = 5;               // words per shingle
  double threshold = 0.8;           // Jaccard at which two texts are near-duplicates
  double false_positive_weight = 0.5, false_negative_weight = 0.5;  // datasketch's defaults
  std::optional<std::pair<size_t, size_t>> bands_rows;  // unset: chosen by lsh_parameters
};

struct Methods {
  bool ngram = true, llama2 = true, minhash = true;
};

// The CLI's and Python's spellings: methods "ngram", "llama2", "minhash", "all" (each entry may hold several,
// comma-separated); punctuation "strip" | "keep"; digits "keep" | "mask". An unknown word is an invalid_argument.
Result<Methods> parse_methods(const std::vector<std::string>& names);
Result<NormalizeOptions> parse_normalize(bool lowercase, std::string_view punctuation, std::string_view digits);
Result<MinHashScheme> parse_scheme(std::string_view name);  // "legacy" | "affine32"

struct CheckOptions {
  Methods methods;
  NormalizeOptions normalize;
  TextColumns columns;
  NgramOptions ngram;
  Llama2Options llama2;
  MinHashOptions minhash;
  unsigned threads = 0;             // 0: every core
  size_t chunk_bytes = size_t{4} << 20;  // training text handed to a worker at a time
  size_t quote_chars = 160;         // longest quote of a matched span in the report
  // Called from the reading thread now and then with the bytes and documents read so far (progress lines).
  std::function<void(uint64_t bytes, uint64_t docs)> progress;
};

// ---- MinHash and LSH ----

// datasketch's permutations. legacy: a_k in [1, p), b_k in [0, p), p = 2^61 - 1; affine32: a_k odd, b_k any, 32 bits.
// Drawn here from splitmix64(seed) (datasketch draws them with NumPy's RandomState; pass these to
// datasketch.MinHash(permutations=..., scheme=...) to compare).
struct Permutations {
  std::vector<uint64_t> a, b;
  MinHashScheme scheme = MinHashScheme::legacy;
};
Permutations minhash_permutations(size_t num_perm, uint64_t seed, MinHashScheme scheme = MinHashScheme::legacy);
// Signature as datasketch computes it from 32-bit shingle values h (the low half of a shingle's 64-bit rolling hash):
// legacy: min over h of ((a*h + b) mod 2^64) mod p, truncated to 32 bits (datasketch multiplies in NumPy uint64,
// which wraps); affine32: min over h of (a * fmix32(h) + b) mod 2^32. 2^32 - 1 for an empty set.
void minhash_signature(const std::vector<uint32_t>& shingles, const Permutations& perms, std::vector<uint32_t>& sig);
// The shingles of a text: hashes of its word k-grams (the whole text when it has fewer than k words).
void shingle_hashes(const std::vector<Word>& words, size_t k, std::vector<uint64_t>& out);
double jaccard_estimate(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
// |A ∩ B| / |A ∪ B| of two sorted, duplicate-free sets.
double exact_jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);
// datasketch's MinHashLSH._optimal_param: (bands, rows) with bands * rows <= num_perm minimising
// w_fp * ∫_0^t P(s) ds + w_fn * ∫_t^1 (1 - P(s)) ds, P(s) = 1 - (1 - s^r)^b.
std::pair<size_t, size_t> lsh_parameters(double threshold, size_t num_perm, double false_positive_weight = 0.5,
                                         double false_negative_weight = 0.5);

// ---- the report ----

enum class Verdict { clean, partial, full };
const char* verdict_name(Verdict v);

struct TrainPlace {
  DocRef doc;
  uint32_t char_offset = 0;  // byte offset of the match in the training text
  uint32_t word_offset = 0;
};

struct Span {
  uint32_t begin = 0, end = 0;  // bytes of the eval text
  uint32_t words = 0;
  std::string quote;            // the eval text of the span (cut to quote_chars)
  TrainPlace train;             // where its first matched n-gram occurs first in the training data
  uint32_t train_docs = 0;      // training documents holding that n-gram
};

struct NgramResult {
  size_t n = 0;
  bool checkable = true;        // false: the text has fewer than n words
  uint32_t words = 0, covered = 0;
  double coverage = 0;
  std::vector<Span> spans;
  Verdict verdict = Verdict::clean;
};

struct Llama2Result {
  uint32_t tokens = 0, contaminated = 0;
  double fraction = 0;
  std::string category;         // clean, not clean, not dirty, dirty (Llama 2's four subsets)
  std::vector<Span> spans;
  Verdict verdict = Verdict::clean;
};

struct MinHashResult {
  double jaccard = 0;           // exact, on the shingles, of the best confirmed training document
  double estimate = 0;          // the MinHash estimate for that pair
  uint32_t near_duplicates = 0; // training documents at or above the threshold
  std::optional<DocRef> train;
  Verdict verdict = Verdict::clean;
};

struct TextResult {
  uint32_t field = 0;
  NgramResult ngram;
  Llama2Result llama2;
  MinHashResult minhash;
  Verdict verdict = Verdict::clean;
};

struct ItemResult {
  uint32_t set = 0;
  size_t item = 0;              // index into the set's items
  std::vector<TextResult> texts;
  Verdict verdict = Verdict::clean;
};

struct SetSummary {
  size_t n = 0;                 // the n-gram length used for this set
  double percentile_words = 0;  // the rule's length percentile
  std::string n_source;         // "gpt3-rule", "option", "index"
  size_t items = 0, texts = 0, too_short = 0;
  size_t full = 0, partial = 0, clean = 0;
  size_t by_method_ngram = 0, by_method_llama2 = 0, by_method_minhash = 0;  // items each method finds
};

struct TrainSummary {
  std::vector<std::string> sources, files, fields;
  uint64_t documents = 0, bytes = 0;
  std::string index;            // the index file, when checked against one
};

struct Report {
  CheckOptions options;
  std::pair<size_t, size_t> bands_rows{0, 0};
  TrainSummary train;
  std::vector<EvalSet> sets;
  std::vector<SetSummary> summaries;
  std::vector<ItemResult> items;
  uint64_t boilerplate_ngrams = 0;  // eval n-grams ignored for being in more than K training documents
  std::vector<std::string> notes;
  Diagnostics diagnostics;
  bool contaminated() const;
};

// Checks eval sets against training files or folders, streaming the training data once.
Result<Report> check(const std::vector<std::string>& train, std::vector<EvalSet> sets, const CheckOptions& options);

// The scan split for a cluster: a shard of training files gives a partial result (opaque bytes, the same for any
// thread count); partials of disjoint shards merged in any order give the report check() gives on all files.
// `first_file` is the shard's first file's index in the whole file list.
Result<std::string> check_shard(const std::vector<std::string>& train_files, uint32_t first_file,
                                const std::vector<EvalSet>& sets, const CheckOptions& options);
Result<Report> merge_shards(const std::vector<std::string>& train_files, std::vector<EvalSet> sets,
                            const std::vector<std::string>& partials, const CheckOptions& options);
// The files a training path stands for (a folder's sample and .txt files), in the order check() reads them.
Result<std::vector<std::string>> training_files(const std::vector<std::string>& paths);

// ---- persistent index ----

struct IndexInfo {
  uint32_t version = 0;
  std::vector<size_t> sizes;    // n-gram lengths held
  NormalizeOptions normalize;
  uint64_t documents = 0, bytes = 0, ngrams = 0;
  std::vector<std::string> files, fields;
};
// Builds the index of every n-gram of the given lengths in the training data and writes it to `out` (a versioned
// binary file with a header and an XXH3-64 checksum; docs/contamination.md).
Result<IndexInfo> build_index(const std::vector<std::string>& train, const std::vector<size_t>& sizes,
                              const CheckOptions& options, const std::string& out);
// Checks eval sets against an index file; a corrupt, truncated or other-version file is refused with the reason.
Result<Report> check_index(const std::string& index, std::vector<EvalSet> sets, const CheckOptions& options);
// Reads an index from memory (the fuzz target's entry point).
Result<IndexInfo> parse_index(std::string_view bytes);

// ---- writers ----

Json report_json(const Report& report);         // rldk.contamination/v1
std::string report_markdown(const Report& report);
std::string report_html(const Report& report);  // the contamination card
// The eval rows split by verdict, one JSON object per line, for re-scoring an eval on its clean part.
std::string clean_jsonl(const Report& report);
std::string dirty_jsonl(const Report& report);

}  // namespace rldk::contamination
