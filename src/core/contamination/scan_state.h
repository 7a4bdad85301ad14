// What the training scan learns about the eval side, and how partial scans (threads, shards, cluster nodes) combine.
// Every combination rule is order-free (sums, minima by DocRef, maxima with DocRef tie-breaks), which is what makes
// the report the same for any thread count and any split of the corpus.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contamination/minhash_lsh.h"
#include "contamination/ngram_table.h"
#include "rldk/contamination.h"

namespace rldk::contamination {

inline constexpr DocRef NO_DOC{0xFFFFFFFFu, 0xFFFFFFFFu, ~uint64_t{0}};

// One n-gram as seen in the training data: how many documents hold it and where it occurs first.
struct TrainInfo {
  uint32_t docs = 0;
  uint32_t char_offset = 0, word_offset = 0;
  DocRef first = NO_DOC;
  void merge(const TrainInfo& o) {
    docs = docs + o.docs < docs ? 0xFFFFFFFFu : docs + o.docs;  // saturates
    if (o.docs > 0 && o.first < first) {
      first = o.first;
      char_offset = o.char_offset;
      word_offset = o.word_offset;
    }
  }
};

// The best near-duplicate of one eval text.
struct NearDuplicate {
  double jaccard = 0, estimate = 0;
  uint32_t count = 0;
  DocRef doc = NO_DOC;
  void offer(double j, double est, const DocRef& d) {
    ++count;
    if (j > jaccard || (j == jaccard && d < doc)) {
      jaccard = j;
      estimate = est;
      doc = d;
    }
  }
  void merge(const NearDuplicate& o) {
    count += o.count;
    if (o.count > 0 && (o.jaccard > jaccard || (o.jaccard == jaccard && o.doc < doc))) {
      jaccard = o.jaccard;
      estimate = o.estimate;
      doc = o.doc;
    }
  }
};

// A text of an eval set, numbered across all sets.
struct TextRef {
  uint32_t set = 0;
  uint32_t item = 0;
  uint32_t text = 0;
};

// The eval side, built once: every n-gram key of the lengths in use, and the MinHash signatures and shingle sets.
struct EvalIndex {
  std::vector<TextRef> texts;
  std::vector<size_t> set_n;           // n-gram length per set (0: the method is off)
  std::vector<double> set_percentile;  // the GPT-3 rule's length percentile per set
  std::vector<size_t> sizes;           // distinct lengths to roll over training documents
  NgramTable table;
  // MinHash
  Permutations perms;
  std::pair<size_t, size_t> bands_rows{0, 0};
  std::vector<std::vector<uint64_t>> shingles;  // per text, sorted, unique
  std::vector<std::vector<uint32_t>> signatures;
  std::unique_ptr<LshIndex> lsh;
};

// What one scan of (part of) the training data found; merged across workers and shards.
struct Partial {
  std::vector<TrainInfo> infos;        // per eval n-gram slot
  std::vector<NearDuplicate> near;     // per eval text
  std::vector<std::string> files, fields;
  uint64_t documents = 0, bytes = 0;
  Diagnostics diagnostics;
};

// From the word counts of a set's items (all their checked texts), the GPT-3 rule's N: NumPy's default (linear)
// percentile, floored, clamped.
size_t gpt3_n(const std::vector<size_t>& lengths, const NgramOptions& options, double& percentile);

EvalIndex build_eval_index(const std::vector<EvalSet>& sets, const CheckOptions& options);
// Streams `files` (numbered from first_file) against the eval index on options.threads workers.
Result<Partial> scan_training(const std::vector<std::string>& files, uint32_t first_file, const EvalIndex& index,
                              const CheckOptions& options);
// Merges `other` (a later shard: its file and field numbers follow ours) into `into`.
void merge_partial(Partial& into, Partial other);
std::string serialize_partial(const Partial& p);
Result<Partial> deserialize_partial(std::string_view bytes, const EvalIndex& index);

// Verdicts, spans and summaries from what the training side knows about each n-gram key (nullptr: never seen).
using Lookup = std::function<const TrainInfo*(uint64_t key)>;
Report finish_report(std::vector<EvalSet> sets, const EvalIndex& index, const Lookup& lookup,
                     const std::vector<NearDuplicate>* near, const CheckOptions& options);

}  // namespace rldk::contamination
