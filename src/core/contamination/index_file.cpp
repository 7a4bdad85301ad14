// The persistent index: every n-gram of the chosen lengths in a training corpus, with the number of documents holding
// it and its first place, built once (`rldk contamination index`) and checked by many eval sets (`--index`).
//
// Layout (little-endian), version 1:
//   u64 magic "RLDKCIDX" | u32 version | u32 normalisation flags | u64 XXH3-64 of every byte after this field
//   sizes: u64 count, u32 each | u64 documents | u64 bytes | files: u64 count, (u64 length, bytes) each | fields: same
//   entries: u64 count, each u64 key, u32 documents, u32 byte offset, u32 word offset, u32 file, u32 field, u64 row
// The checksum is verified before anything else is trusted; every count is checked against the bytes left.
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "contamination/binary_io.h"
#include "contamination/ngram_hash.h"
#include "contamination/scan_state.h"

namespace rldk::contamination {
namespace {

constexpr uint64_t INDEX_MAGIC = 0x584449434B444C52ULL;  // "RLDKCIDX"
// The keys are the word hash (tokenize.cpp) rolled by ngram_hash: a change to either makes old indexes silently miss,
// so it must come with a new version here.
constexpr uint32_t INDEX_VERSION = 1;
constexpr size_t HEADER_BYTES = 24;
constexpr size_t ENTRY_BYTES = 36;

uint32_t flags_of(const NormalizeOptions& n) {
  return (n.lowercase ? 1u : 0u) | (n.punctuation == Punctuation::keep ? 2u : 0u) | (n.digits == Digits::mask ? 4u : 0u);
}
NormalizeOptions normalize_of(uint32_t flags) {
  NormalizeOptions n;
  n.lowercase = flags & 1u;
  n.punctuation = flags & 2u ? Punctuation::keep : Punctuation::strip;
  n.digits = flags & 4u ? Digits::mask : Digits::keep;
  return n;
}

struct IndexData {
  IndexInfo info;
  NgramTable table;
  std::vector<TrainInfo> infos;
};

Error corrupt(const std::string& why) {
  return Error{ErrorCode::unrecognized, "not a usable rldk contamination index: " + why, ""};
}

Result<IndexData> parse(std::string_view bytes) {
  ByteReader head(bytes);
  uint64_t magic = 0, checksum = 0;
  uint32_t version = 0, flags = 0;
  if (!head.u64(magic) || magic != INDEX_MAGIC) return corrupt("it does not start with the index magic RLDKCIDX");
  if (!head.u32(version) || !head.u32(flags) || !head.u64(checksum)) return corrupt("the header is cut short");
  if (version != INDEX_VERSION) {
    return corrupt("index format version " + std::to_string(version) + ", this rldk reads version " +
                   std::to_string(INDEX_VERSION) + "; rebuild it with `rldk contamination index`");
  }
  if (flags > 7) return corrupt("unknown normalisation flags");
  std::string_view body = bytes.substr(HEADER_BYTES);
  if (XXH3_64bits(body.data(), body.size()) != checksum) return corrupt("checksum mismatch (damaged or truncated)");
  ByteReader r(body);
  IndexData d;
  d.info.version = version;
  d.info.normalize = normalize_of(flags);
  uint64_t n = 0;
  if (!r.count(n, 4) || n == 0 || n > 64) return corrupt("bad list of n-gram lengths");
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t size = 0;
    if (!r.u32(size) || size == 0 || size > 1000) return corrupt("bad n-gram length");
    d.info.sizes.push_back(size);
  }
  if (!r.u64(d.info.documents) || !r.u64(d.info.bytes)) return corrupt("cut short");
  for (auto* list : {&d.info.files, &d.info.fields}) {
    if (!r.count(n, 8)) return corrupt("cut short");
    for (uint64_t i = 0; i < n; ++i) {
      std::string s;
      if (!r.str(s)) return corrupt("cut short");
      list->push_back(std::move(s));
    }
  }
  if (!r.count(n, ENTRY_BYTES)) return corrupt("cut short");
  d.info.ngrams = n;
  d.table = NgramTable(n);
  d.infos.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t key = 0;
    TrainInfo& t = d.infos[i];
    if (!r.u64(key) || !r.u32(t.docs) || !r.u32(t.char_offset) || !r.u32(t.word_offset) || !r.u32(t.first.file) ||
        !r.u32(t.first.field) || !r.u64(t.first.row)) {
      return corrupt("cut short");
    }
    if (key == 0 || t.docs == 0 || t.first.file >= d.info.files.size() || t.first.field >= d.info.fields.size()) {
      return corrupt("entry " + std::to_string(i) + " is out of range");
    }
    if (d.table.insert(key) != i) return corrupt("entry " + std::to_string(i) + " repeats a key");
  }
  if (r.left() != 0) return corrupt("trailing bytes after the entries");
  return d;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::not_found, "cannot open the index", path};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Result<IndexInfo> parse_index(std::string_view bytes) {
  auto d = parse(bytes);
  if (!d.ok()) return d.error();
  return d->info;
}

Result<IndexInfo> build_index(const std::vector<std::string>& train, const std::vector<size_t>& sizes,
                              const CheckOptions& options, const std::string& out) {
  if (sizes.empty() || sizes.size() > 64 ||
      std::any_of(sizes.begin(), sizes.end(), [](size_t n) { return n < 1 || n > 1000; })) {
    return Error{ErrorCode::invalid_argument, "n-gram lengths must be 1..1000 (at most 64 of them)", ""};
  }
  // One thread inserts: the table is shared and the build is a one-off; reading and hashing dominate anyway.
  IndexData d;
  std::vector<uint64_t> last_seen;
  std::vector<Word> words;
  std::vector<uint64_t> hashes;
  uint64_t seq = 0;
  Diagnostics diagnostics;
  Status read = read_training(train, 0, options.columns, d.info.files, d.info.fields, [&](const TrainDoc& doc) {
    ++seq;
    ++d.info.documents;
    d.info.bytes += doc.text.size();
    tokenize(doc.text, options.normalize, words);
    for (size_t n : sizes) {
      ngram_hashes(words, n, hashes);
      for (size_t i = 0; i < hashes.size(); ++i) {
        uint32_t slot = d.table.insert(hashes[i]);
        if (slot == d.infos.size()) {
          d.infos.emplace_back();
          last_seen.push_back(0);
        }
        if (last_seen[slot] == seq) continue;
        last_seen[slot] = seq;
        TrainInfo& t = d.infos[slot];
        if (t.docs < 0xFFFFFFFFu) ++t.docs;
        if (doc.ref < t.first) {
          t.first = doc.ref;
          t.char_offset = words[i].begin;
          t.word_offset = static_cast<uint32_t>(i);
        }
      }
    }
    if (options.progress && (d.info.documents & 0xFFFF) == 0) options.progress(d.info.bytes, d.info.documents);
  }, diagnostics);
  if (!read.ok()) return read.error();
  ByteWriter w;
  w.u64(sizes.size());
  for (size_t n : sizes) w.u32(static_cast<uint32_t>(n));
  w.u64(d.info.documents);
  w.u64(d.info.bytes);
  for (const auto* list : {&d.info.files, &d.info.fields}) {
    w.u64(list->size());
    for (const auto& s : *list) w.str(s);
  }
  std::vector<uint64_t> keys = d.table.keys_by_slot();
  w.u64(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const TrainInfo& t = d.infos[i];
    w.u64(keys[i]);
    w.u32(t.docs);
    w.u32(t.char_offset);
    w.u32(t.word_offset);
    w.u32(t.first.file);
    w.u32(t.first.field);
    w.u64(t.first.row);
  }
  ByteWriter head;
  head.u64(INDEX_MAGIC);
  head.u32(INDEX_VERSION);
  head.u32(flags_of(options.normalize));
  head.u64(XXH3_64bits(w.bytes().data(), w.bytes().size()));
  std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(head.bytes().data(), static_cast<std::streamsize>(head.bytes().size()));
    f.write(w.bytes().data(), static_cast<std::streamsize>(w.bytes().size()));
    if (!f) return Error{ErrorCode::io, "cannot write the index", out};
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) return Error{ErrorCode::io, "cannot write the index", out};
  d.info.version = INDEX_VERSION;
  d.info.sizes = sizes;
  d.info.normalize = options.normalize;
  d.info.ngrams = keys.size();
  return d.info;
}

Result<Report> check_index(const std::string& path, std::vector<EvalSet> sets, const CheckOptions& given) {
  auto bytes = read_file(path);
  if (!bytes.ok()) return bytes.error();
  auto parsed = parse(bytes.value());
  if (!parsed.ok()) return Error{parsed.error().code, parsed.error().message, path};
  IndexData& d = parsed.value();
  if (sets.empty()) return Error{ErrorCode::invalid_argument, "no eval set to check", ""};
  CheckOptions options = given;
  options.normalize = d.info.normalize;  // the index's hashes only match text normalised the same way
  std::vector<std::string> notes;
  if (options.methods.minhash) {
    options.methods.minhash = false;
    notes.push_back("minhash: not run; the index holds n-grams only (check against --train for near-duplicates)");
  }
  const std::vector<size_t>& sizes = d.info.sizes;
  if (options.methods.llama2 && std::find(sizes.begin(), sizes.end(), options.llama2.min_tokens) == sizes.end()) {
    options.methods.llama2 = false;
    notes.push_back("llama2: not run; the index holds no " + std::to_string(options.llama2.min_tokens) +
                    "-grams (build it with --ngram including " + std::to_string(options.llama2.min_tokens) + ")");
  }
  if (!options.methods.ngram && !options.methods.llama2) {
    return Error{ErrorCode::invalid_argument, "none of the chosen methods can run on this index", path};
  }
  CheckOptions eval_side = options;
  eval_side.methods.minhash = false;
  EvalIndex index = build_eval_index(sets, eval_side);
  for (size_t s = 0; s < index.set_n.size() && options.methods.ngram; ++s) {
    size_t wanted = index.set_n[s];
    // The index's length nearest to the one wanted, preferring a shorter one (it finds more, never less).
    size_t pick = 0;
    for (size_t n : sizes) {
      if (n <= wanted && n > pick) pick = n;
    }
    if (pick == 0) pick = *std::min_element(sizes.begin(), sizes.end());
    if (pick != wanted) {
      notes.push_back(sets[s].source + ": n-gram length " + std::to_string(pick) + " from the index instead of " +
                      std::to_string(wanted) + (given.ngram.n ? " (asked for)" : " (GPT-3 rule)"));
    }
    index.set_n[s] = pick;
  }
  Lookup lookup = [&](uint64_t key) -> const TrainInfo* {
    uint32_t slot = d.table.find(key);
    return slot == NgramTable::MISSING ? nullptr : &d.infos[slot];
  };
  Report report = finish_report(std::move(sets), index, lookup, nullptr, options);
  for (auto& s : report.summaries) s.n_source = "index";
  report.notes = std::move(notes);
  report.train.index = path;
  report.train.files = d.info.files;
  report.train.fields = d.info.fields;
  report.train.documents = d.info.documents;
  report.train.bytes = d.info.bytes;
  return report;
}

}  // namespace rldk::contamination
