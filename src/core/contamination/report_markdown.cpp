// The contamination report as Markdown: headline, per-set rates by method, the contaminated items with their quoted
// spans and training places, and the settings that produced them. Every piece of data goes through md_text/md_code.
#include "contamination/report_text.h"
#include "report/markdown_text.h"

namespace rldk::contamination {
namespace {

constexpr size_t MAX_ITEMS = 50;
constexpr size_t MAX_SPANS = 5;

std::string settings(const Report& r) {
  const CheckOptions& o = r.options;
  std::string s = "Normalisation: " + std::string(o.normalize.lowercase ? "lower-cased" : "case kept") + ", " +
                  (o.normalize.punctuation == Punctuation::strip ? "punctuation stripped" : "punctuation kept") +
                  ", " + (o.normalize.digits == Digits::keep ? "digits kept" : "digits masked") +
                  "; Unicode word tokenizer.";
  if (o.methods.ngram) {
    s += " N-grams: GPT-3 rule (" + std::to_string(o.ngram.min_n) + "..." + std::to_string(o.ngram.max_n) +
         " words from the eval set's " + std::to_string(static_cast<int>(o.ngram.length_percentile)) +
         "th-percentile length" + (o.ngram.n ? ", overridden to " + std::to_string(*o.ngram.n) : "") +
         "), n-grams in more than " + std::to_string(o.ngram.boilerplate_docs) +
         " training documents ignored, full at " + percent(o.ngram.full_coverage) + " coverage.";
  }
  if (o.methods.llama2) {
    s += " Llama 2: tokens in matched n-grams of more than " + std::to_string(o.llama2.min_tokens - 1) +
         " tokens, skip-gram budget " + std::to_string(o.llama2.skip_budget) + ", clean below " +
         percent(o.llama2.clean_below) + ", dirty above " + percent(o.llama2.dirty_above) + ".";
  }
  if (o.methods.minhash) {
    s += " MinHash: " + std::to_string(o.minhash.num_perm) + " permutations (" + scheme_name(o.minhash.scheme) + ", seed " +
         std::to_string(o.minhash.seed) + "), " + std::to_string(o.minhash.shingle) + "-word shingles, Jaccard >= " +
         std::to_string(o.minhash.threshold).substr(0, 4) + ", LSH " + std::to_string(r.bands_rows.first) + " bands x " +
         std::to_string(r.bands_rows.second) + " rows, candidates confirmed by exact Jaccard.";
  }
  return s;
}

}  // namespace

std::string report_markdown(const Report& r) {
  std::string md = "# rldk contamination\n\n" + md_text(headline(r)) + "\n\n";
  if (!r.train.index.empty()) {
    md += "Training data: the index " + md_code(r.train.index) + " (" + std::to_string(r.train.documents) +
          " documents, " + std::to_string(r.train.bytes) + " bytes).\n\n";
  } else {
    md += "Training data: " + std::to_string(r.train.documents) + " documents, " + std::to_string(r.train.bytes) +
          " bytes, " + std::to_string(r.train.files.size()) + " files.\n\n";
  }
  md += md_text(settings(r)) + "\n\n";
  md += "## Eval sets\n\n| eval set | items | n | full | partial | clean | contaminated | by n-gram | by Llama 2 | "
        "by MinHash |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (size_t s = 0; s < r.sets.size(); ++s) {
    const SetSummary& x = r.summaries[s];
    double rate = x.items ? static_cast<double>(x.full + x.partial) / static_cast<double>(x.items) : 0;
    md += "| " + md_code(r.sets[s].source) + " | " + std::to_string(x.items) + " | " +
          (x.n ? std::to_string(x.n) + " (" + x.n_source + ")" : "-") + " | " + std::to_string(x.full) + " | " +
          std::to_string(x.partial) + " | " + std::to_string(x.clean) + " | " + percent(rate) + " | " +
          std::to_string(x.by_method_ngram) + " | " + std::to_string(x.by_method_llama2) + " | " +
          std::to_string(x.by_method_minhash) + " |\n";
    if (x.too_short) {
      md += "\n" + std::to_string(x.too_short) + " texts of " + md_code(r.sets[s].source) +
            " are shorter than the n-gram length and were not checked by n-grams.\n";
    }
  }
  size_t shown = 0, contaminated = 0;
  for (const auto& it : r.items) contaminated += it.verdict != Verdict::clean;
  if (contaminated) md += "\n## Contaminated items\n\n";
  for (const auto& it : r.items) {
    if (it.verdict == Verdict::clean) continue;
    if (shown++ == MAX_ITEMS) {
      md += "\n" + std::to_string(contaminated - MAX_ITEMS) + " more in contamination.json.\n";
      break;
    }
    const EvalSet& set = r.sets[it.set];
    const EvalItem& item = set.items[it.item];
    md += "### " + md_text(set.files[item.file] + ":" + std::to_string(item.row + 1)) + ": " +
          verdict_name(it.verdict) + "\n\n";
    for (const auto& t : it.texts) {
      if (t.verdict == Verdict::clean) continue;
      std::string line = "- " + md_code(set.fields[t.field]) + ":";
      if (r.options.methods.ngram && t.ngram.checkable) {
        line += " " + percent(t.ngram.coverage) + " of words in matched " + std::to_string(t.ngram.n) + "-grams;";
      }
      if (r.options.methods.llama2) {
        line += " Llama 2 " + percent(t.llama2.fraction) + " (" + t.llama2.category + ");";
      }
      if (r.options.methods.minhash && t.minhash.train) {
        line += " near-duplicate of " + md_text(train_place(r, *t.minhash.train)) + " (Jaccard " +
                std::to_string(t.minhash.jaccard).substr(0, 5) + ");";
      }
      md += line + "\n";
      const std::vector<Span>& spans = t.ngram.spans.empty() ? t.llama2.spans : t.ngram.spans;
      for (size_t k = 0; k < spans.size() && k < MAX_SPANS; ++k) {
        const Span& s = spans[k];
        md += "  - bytes " + std::to_string(s.begin) + "-" + std::to_string(s.end) + " (" + std::to_string(s.words) +
              " words): " + md_code(s.quote) + ", first in " + md_text(train_place(r, s.train.doc)) + " at byte " +
              std::to_string(s.train.char_offset) + ", in " + std::to_string(s.train_docs) + " training documents\n";
      }
    }
    md += "\n";
  }
  if (r.boilerplate_ngrams) {
    md += "\n" + std::to_string(r.boilerplate_ngrams) + " eval n-grams were ignored as boilerplate (in more than " +
          std::to_string(r.options.ngram.boilerplate_docs) + " training documents).\n";
  }
  for (const auto& n : r.notes) md += "\n- note: " + md_text(n) + "\n";
  if (!r.diagnostics.empty()) {
    md += "\n## Input problems\n\n";
    for (const auto& [kind, count] : r.diagnostics.counts()) md += "- " + md_code(kind) + ": " + std::to_string(count) + "\n";
    for (const auto& d : r.diagnostics.examples()) md += "- " + md_text(to_string(d)) + "\n";
  }
  return md;
}

}  // namespace rldk::contamination
