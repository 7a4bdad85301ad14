// The streaming scan: the eval side is indexed once (n-gram keys, MinHash signatures in LSH bands), then the
// training corpus is read once by the calling thread and handed out in chunks of documents to worker threads. Each
// worker keeps its own counters per eval n-gram over the shared read-only key table, so the hot loop takes no lock;
// the counters are merged at the end. Memory: the eval index, one counter array per worker and at most
// 2 x threads chunks in flight, however large the corpus.
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "contamination/ngram_hash.h"
#include "contamination/scan_state.h"

namespace rldk::contamination {

size_t gpt3_n(const std::vector<size_t>& lengths, const NgramOptions& options, double& percentile) {
  percentile = 0;
  if (lengths.empty()) return options.max_n;
  std::vector<size_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  // numpy.percentile(..., method="linear"): position (len - 1) * q / 100 between the two neighbouring values.
  double pos = static_cast<double>(sorted.size() - 1) * options.length_percentile / 100.0;
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  percentile = static_cast<double>(sorted[lo]) + (pos - static_cast<double>(lo)) *
                                                     (static_cast<double>(sorted[hi]) - static_cast<double>(sorted[lo]));
  size_t n = static_cast<size_t>(std::floor(percentile));
  return std::clamp(n, options.min_n, options.max_n);
}

EvalIndex build_eval_index(const std::vector<EvalSet>& sets, const CheckOptions& options) {
  EvalIndex index;
  std::vector<Word> words;
  std::vector<uint64_t> hashes;
  for (uint32_t s = 0; s < sets.size(); ++s) {
    // GPT-3's "example length": the words of the whole item (prompt and answer together when both are checked).
    std::vector<size_t> lengths;
    for (uint32_t i = 0; i < sets[s].items.size(); ++i) {
      size_t length = 0;
      for (uint32_t t = 0; t < sets[s].items[i].texts.size(); ++t) {
        index.texts.push_back(TextRef{s, i, t});
        tokenize(sets[s].items[i].texts[t].text, options.normalize, words);
        length += words.size();
      }
      lengths.push_back(length);
    }
    double percentile = 0;
    size_t n = gpt3_n(lengths, options.ngram, percentile);
    if (options.ngram.n) n = *options.ngram.n;
    index.set_n.push_back(options.methods.ngram ? n : 0);
    index.set_percentile.push_back(percentile);
  }
  for (size_t n : index.set_n) {
    if (n > 0) index.sizes.push_back(n);
  }
  if (options.methods.llama2) index.sizes.push_back(options.llama2.min_tokens);
  std::sort(index.sizes.begin(), index.sizes.end());
  index.sizes.erase(std::unique(index.sizes.begin(), index.sizes.end()), index.sizes.end());

  if (options.methods.minhash) {
    const MinHashOptions& m = options.minhash;
    index.perms = minhash_permutations(m.num_perm, m.seed, m.scheme);
    index.bands_rows = m.bands_rows ? *m.bands_rows
                                    : lsh_parameters(m.threshold, m.num_perm, m.false_positive_weight,
                                                     m.false_negative_weight);
    index.lsh = std::make_unique<LshIndex>(index.bands_rows.first, index.bands_rows.second);
    index.shingles.resize(index.texts.size());
    index.signatures.resize(index.texts.size());
  }
  MinHasher hasher(index.perms);
  std::vector<uint32_t> low;
  for (uint32_t id = 0; id < index.texts.size(); ++id) {
    const TextRef& r = index.texts[id];
    tokenize(sets[r.set].items[r.item].texts[r.text].text, options.normalize, words);
    for (size_t n : {index.set_n[r.set], options.methods.llama2 ? options.llama2.min_tokens : 0}) {
      if (n == 0) continue;
      ngram_hashes(words, n, hashes);
      for (uint64_t h : hashes) index.table.insert(h);
    }
    // A text shorter than one shingle is not a near-duplicate of anything: a one-word answer ("72") would equal
    // every training answer that is the same number.
    if (options.methods.minhash && words.size() >= options.minhash.shingle) {
      shingle_hashes(words, options.minhash.shingle, hashes);
      low.assign(hashes.size(), 0);
      for (size_t i = 0; i < hashes.size(); ++i) low[i] = static_cast<uint32_t>(hashes[i]);
      std::sort(hashes.begin(), hashes.end());
      hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
      index.shingles[id] = hashes;
      hasher.signature(low, index.signatures[id]);
      if (!hashes.empty()) index.lsh->insert(index.signatures[id], id);
    }
  }
  return index;
}

namespace {

struct Chunk {
  std::string arena;
  struct Doc {
    DocRef ref;
    size_t offset;
    size_t size;
  };
  std::vector<Doc> docs;
};

// A bounded queue: when the workers fall behind, the reader scans the chunk itself instead of queueing it, so memory
// stays at a few chunks and no core idles while the reader waits.
class ChunkQueue {
 public:
  explicit ChunkQueue(size_t capacity) : capacity_(capacity) {}
  // False when the queue is full (the chunk is left with the caller).
  bool try_push(Chunk& chunk) {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= capacity_) return false;
    queue_.push_back(std::move(chunk));
    not_empty_.notify_one();
    return true;
  }
  bool pop(Chunk& chunk) {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return false;
    chunk = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_empty_;
  std::deque<Chunk> queue_;
  bool closed_ = false;
};

// One worker's view: counters over the shared eval index.
class Worker {
 public:
  Worker(const EvalIndex& index, const CheckOptions& options)
      : index_(index), options_(options), hasher_(index.perms), last_seen_(index.table.size(), 0) {
    partial_.infos.resize(index.table.size());
    partial_.near.resize(index.texts.size());
  }

  void document(const DocRef& ref, std::string_view text) {
    ++seq_;
    tokenize(text, options_.normalize, words_);
    if (index_.table.size() > 0) {
      for (size_t n : index_.sizes) {
        ngram_hashes(words_, n, hashes_);
        for (size_t i = 0; i < hashes_.size(); ++i) {
          uint32_t slot = index_.table.find(hashes_[i]);
          if (slot == NgramTable::MISSING) continue;
          TrainInfo& info = partial_.infos[slot];
          if (last_seen_[slot] == seq_) continue;  // counted for this document already; its first place is kept
          last_seen_[slot] = seq_;
          if (info.docs < 0xFFFFFFFFu) ++info.docs;
          if (ref < info.first) {
            info.first = ref;
            info.char_offset = words_[i].begin;
            info.word_offset = static_cast<uint32_t>(i);
          }
        }
      }
    }
    if (index_.lsh) near_duplicates(ref);
  }

  Partial& partial() { return partial_; }

 private:
  void near_duplicates(const DocRef& ref) {
    if (words_.size() < options_.minhash.shingle) return;  // as on the eval side: too short to be a near-duplicate
    shingle_hashes(words_, options_.minhash.shingle, hashes_);
    if (hashes_.empty()) return;
    low_.resize(hashes_.size());
    for (size_t i = 0; i < hashes_.size(); ++i) low_[i] = static_cast<uint32_t>(hashes_[i]);
    hasher_.signature(low_, signature_);
    index_.lsh->candidates(signature_, candidates_);
    if (candidates_.empty()) return;
    std::sort(hashes_.begin(), hashes_.end());
    hashes_.erase(std::unique(hashes_.begin(), hashes_.end()), hashes_.end());
    for (uint32_t c : candidates_) {
      double j = exact_jaccard(index_.shingles[c], hashes_);
      if (j >= options_.minhash.threshold) {
        partial_.near[c].offer(j, jaccard_estimate(index_.signatures[c], signature_), ref);
      }
    }
  }

  const EvalIndex& index_;
  const CheckOptions& options_;
  MinHasher hasher_;
  std::vector<uint64_t> last_seen_;
  uint64_t seq_ = 0;
  Partial partial_;
  std::vector<Word> words_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> low_, signature_, candidates_;
};

void process(Worker& worker, const Chunk& chunk) {
  for (const auto& d : chunk.docs) worker.document(d.ref, std::string_view(chunk.arena).substr(d.offset, d.size));
}

}  // namespace

Result<Partial> scan_training(const std::vector<std::string>& files, uint32_t first_file, const EvalIndex& index,
                              const CheckOptions& options) {
  // threads - 1 pool workers, and the reading thread, which scans a chunk itself whenever the queue is full.
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned t = 0; t < threads; ++t) workers.push_back(std::make_unique<Worker>(index, options));
  ChunkQueue queue(2 * threads);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    pool.emplace_back([&queue, &worker = *workers[t]] {
      Chunk chunk;
      while (queue.pop(chunk)) process(worker, chunk);
    });
  }
  Partial out;
  Chunk chunk;
  uint64_t reported = 0;
  auto hand_out = [&] {
    if (chunk.docs.empty()) return;
    if (threads == 1 || !queue.try_push(chunk)) process(*workers[0], chunk);
    chunk = Chunk{};
    if (options.progress && out.bytes - reported >= (uint64_t{64} << 20)) {
      reported = out.bytes;
      options.progress(out.bytes, out.documents);
    }
  };
  Status read = read_training(files, first_file, options.columns, out.files, out.fields,
                              [&](const TrainDoc& doc) {
                                chunk.docs.push_back(Chunk::Doc{doc.ref, chunk.arena.size(), doc.text.size()});
                                chunk.arena.append(doc.text);
                                ++out.documents;
                                out.bytes += doc.text.size();
                                if (chunk.arena.size() >= options.chunk_bytes) hand_out();
                              },
                              out.diagnostics);
  hand_out();
  queue.close();
  for (auto& t : pool) t.join();
  if (!read.ok()) return read.error();
  if (options.progress) options.progress(out.bytes, out.documents);
  out.infos.resize(index.table.size());
  out.near.resize(index.texts.size());
  for (auto& w : workers) {
    Partial& p = w->partial();
    for (size_t i = 0; i < out.infos.size(); ++i) out.infos[i].merge(p.infos[i]);
    for (size_t i = 0; i < out.near.size(); ++i) out.near[i].merge(p.near[i]);
  }
  return out;
}

void merge_partial(Partial& into, Partial other) {
  // The later shard's fields are renumbered into ours by name, its files follow ours.
  std::vector<uint32_t> field_map;
  for (const auto& f : other.fields) {
    auto it = std::find(into.fields.begin(), into.fields.end(), f);
    if (it == into.fields.end()) {
      into.fields.push_back(f);
      it = into.fields.end() - 1;
    }
    field_map.push_back(static_cast<uint32_t>(it - into.fields.begin()));
  }
  auto remap = [&](DocRef& d) {
    if (d.field < field_map.size()) d.field = field_map[d.field];
  };
  if (into.infos.empty()) into.infos.resize(other.infos.size());
  if (into.near.empty()) into.near.resize(other.near.size());
  for (size_t i = 0; i < other.infos.size() && i < into.infos.size(); ++i) {
    if (other.infos[i].docs > 0) remap(other.infos[i].first);
    into.infos[i].merge(other.infos[i]);
  }
  for (size_t i = 0; i < other.near.size() && i < into.near.size(); ++i) {
    if (other.near[i].count > 0) remap(other.near[i].doc);
    into.near[i].merge(other.near[i]);
  }
  into.files.insert(into.files.end(), other.files.begin(), other.files.end());
  into.documents += other.documents;
  into.bytes += other.bytes;
  into.diagnostics.merge(other.diagnostics);
}

}  // namespace rldk::contamination
