// From n-gram hits to verdicts: matched positions become spans (eval bytes, the training place of their first
// n-gram), the GPT-3 rule's coverage, Llama 2's contaminated-token fraction with its skip-gram budget, the best
// MinHash near-duplicate, and per-set rates.
#include <algorithm>

#include "contamination/scan_state.h"

namespace rldk::contamination {
namespace {

struct Hit {
  size_t pos;
  const TrainInfo* info;
};

// Cuts a quote at `max` bytes, on a UTF-8 character boundary.
std::string quote(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

// Maximal runs of overlapping n-gram windows [pos, pos + n). Windows that only touch stay apart: the text on either
// side may come from different places (a sentence-shuffled copy), and a span claims one contiguous match.
struct Segment {
  size_t begin, end;  // words
  size_t first_hit, last_hit;
};
std::vector<Segment> segments(const std::vector<Hit>& hits, size_t n) {
  std::vector<Segment> out;
  for (size_t h = 0; h < hits.size(); ++h) {
    size_t b = hits[h].pos, e = hits[h].pos + n;
    if (!out.empty() && b < out.back().end) {
      out.back().end = std::max(out.back().end, e);
      out.back().last_hit = h;
    } else {
      out.push_back(Segment{b, e, h, h});
    }
  }
  return out;
}

Span make_span(std::string_view text, const std::vector<Word>& words, size_t begin, size_t end, const Hit& first,
               size_t quote_chars) {
  Span s;
  s.begin = words[begin].begin;
  s.end = words[end - 1].end;
  s.words = static_cast<uint32_t>(end - begin);
  s.quote = quote(text.substr(s.begin, s.end - s.begin), quote_chars);
  s.train = TrainPlace{first.info->first, first.info->char_offset, first.info->word_offset};
  s.train_docs = first.info->docs;
  return s;
}

// The eval positions whose n-gram the training data holds in 1..K documents; n-grams in more are boilerplate.
std::vector<Hit> hits_of(const std::vector<Word>& words, size_t n, const Lookup& lookup, uint32_t max_docs,
                         uint64_t& boilerplate) {
  std::vector<uint64_t> hashes;
  ngram_hashes(words, n, hashes);
  std::vector<Hit> hits;
  for (size_t i = 0; i < hashes.size(); ++i) {
    const TrainInfo* info = lookup(hashes[i]);
    if (!info || info->docs == 0) continue;
    if (info->docs > max_docs) {
      ++boilerplate;
      continue;
    }
    hits.push_back(Hit{i, info});
  }
  return hits;
}

NgramResult ngram_result(std::string_view text, const std::vector<Word>& words, size_t n, const Lookup& lookup,
                         const CheckOptions& options, uint64_t& boilerplate) {
  NgramResult r;
  r.n = n;
  r.words = static_cast<uint32_t>(words.size());
  if (words.size() < n) {
    r.checkable = false;
    return r;
  }
  std::vector<Hit> hits = hits_of(words, n, lookup, options.ngram.boilerplate_docs, boilerplate);
  for (const Segment& s : segments(hits, n)) {
    r.covered += static_cast<uint32_t>(s.end - s.begin);
    r.spans.push_back(make_span(text, words, s.begin, s.end, hits[s.first_hit], options.quote_chars));
  }
  r.coverage = words.empty() ? 0 : static_cast<double>(r.covered) / static_cast<double>(words.size());
  r.verdict = hits.empty() ? Verdict::clean
              : r.coverage >= options.ngram.full_coverage ? Verdict::full
                                                          : Verdict::partial;
  return r;
}

// Two exact segments may be joined across a gap of differing tokens when the training text has them the same
// distance apart in the same document (a substitution, not an insertion), as Llama 2's skip-gram budget allows.
bool aligned(const Hit& before, const Hit& after) {
  const TrainInfo& p = *before.info;
  const TrainInfo& q = *after.info;
  if (!(p.first == q.first) || q.word_offset < p.word_offset) return false;
  return q.word_offset - p.word_offset == after.pos - before.pos;
}

Llama2Result llama2_result(std::string_view text, const std::vector<Word>& words, const Lookup& lookup,
                           const CheckOptions& options, uint64_t& boilerplate) {
  const Llama2Options& o = options.llama2;
  Llama2Result r;
  r.tokens = static_cast<uint32_t>(words.size());
  std::vector<Hit> hits = hits_of(words, o.min_tokens, lookup, options.ngram.boilerplate_docs, boilerplate);
  std::vector<Segment> segs = segments(hits, o.min_tokens);
  for (size_t s = 0; s < segs.size();) {
    // A chain starts with an exact segment (>= min_tokens > exact_prefix tokens, so its first 10 tokens match) and
    // takes the next segment while the mismatched tokens between them stay within the budget; it ends on a match.
    size_t begin = segs[s].begin, end = segs[s].end, budget = o.skip_budget;
    size_t first_hit = segs[s].first_hit, last_hit = segs[s].last_hit;
    size_t next = s + 1;
    while (next < segs.size()) {
      size_t gap = segs[next].begin - end;
      if (gap > budget || end - begin < o.exact_prefix || !aligned(hits[last_hit], hits[segs[next].first_hit])) break;
      budget -= gap;
      end = segs[next].end;
      last_hit = segs[next].last_hit;
      ++next;
    }
    r.contaminated += static_cast<uint32_t>(end - begin);
    r.spans.push_back(make_span(text, words, begin, end, hits[first_hit], options.quote_chars));
    s = next;
  }
  r.fraction = words.empty() ? 0 : static_cast<double>(r.contaminated) / static_cast<double>(words.size());
  if (r.fraction > o.dirty_above) {
    r.category = "dirty";
    r.verdict = Verdict::full;
  } else if (r.fraction < o.clean_below) {
    r.category = "clean";
  } else {
    r.category = "not clean, not dirty";
    r.verdict = Verdict::partial;
  }
  return r;
}

}  // namespace

Report finish_report(std::vector<EvalSet> sets, const EvalIndex& index, const Lookup& lookup,
                     const std::vector<NearDuplicate>* near, const CheckOptions& options) {
  Report report;
  report.options = options;
  report.bands_rows = index.bands_rows;
  report.summaries.resize(sets.size());
  for (size_t s = 0; s < sets.size(); ++s) {
    report.summaries[s].n = index.set_n[s];
    report.summaries[s].percentile_words = index.set_percentile[s];
    report.summaries[s].n_source = options.ngram.n ? "option" : "gpt3-rule";
    report.summaries[s].items = sets[s].items.size();
  }
  std::vector<Word> words;
  size_t text_id = 0;
  for (uint32_t s = 0; s < sets.size(); ++s) {
    SetSummary& summary = report.summaries[s];
    for (size_t i = 0; i < sets[s].items.size(); ++i) {
      ItemResult item;
      item.set = s;
      item.item = i;
      bool by_ngram = false, by_llama2 = false, by_minhash = false;
      for (const EvalText& t : sets[s].items[i].texts) {
        TextResult tr;
        tr.field = t.field;
        tokenize(t.text, options.normalize, words);
        if (options.methods.ngram && index.set_n[s] > 0) {
          tr.ngram = ngram_result(t.text, words, index.set_n[s], lookup, options, report.boilerplate_ngrams);
          summary.too_short += !tr.ngram.checkable;
        }
        if (options.methods.llama2) {
          uint64_t counted_by_ngram = 0;  // the boilerplate count is the n-gram method's
          tr.llama2 = llama2_result(t.text, words, lookup, options, counted_by_ngram);
        }
        if (options.methods.minhash && near) {
          const NearDuplicate& nd = (*near)[text_id];
          if (nd.count > 0) {
            tr.minhash.jaccard = nd.jaccard;
            tr.minhash.estimate = nd.estimate;
            tr.minhash.near_duplicates = nd.count;
            tr.minhash.train = nd.doc;
            tr.minhash.verdict = Verdict::full;
          }
        }
        tr.verdict = std::max({tr.ngram.verdict, tr.llama2.verdict, tr.minhash.verdict});
        by_ngram |= tr.ngram.verdict != Verdict::clean;
        by_llama2 |= tr.llama2.verdict != Verdict::clean;
        by_minhash |= tr.minhash.verdict != Verdict::clean;
        item.verdict = std::max(item.verdict, tr.verdict);
        item.texts.push_back(std::move(tr));
        ++summary.texts;
        ++text_id;
      }
      summary.by_method_ngram += by_ngram;
      summary.by_method_llama2 += by_llama2;
      summary.by_method_minhash += by_minhash;
      switch (item.verdict) {
        case Verdict::clean: ++summary.clean; break;
        case Verdict::partial: ++summary.partial; break;
        case Verdict::full: ++summary.full; break;
      }
      report.items.push_back(std::move(item));
    }
  }
  report.sets = std::move(sets);
  return report;
}

bool Report::contaminated() const {
  return std::any_of(items.begin(), items.end(), [](const ItemResult& i) { return i.verdict != Verdict::clean; });
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::clean: return "clean";
    case Verdict::partial: return "partial";
    case Verdict::full: return "full";
  }
  return "clean";
}

}  // namespace rldk::contamination
