// The contamination card: a self-contained HTML page (HtmlPage escapes every piece of text, so quotes from eval
// and training data can never become markup).
#include "contamination/report_text.h"
#include "rldk/html_page.h"

namespace rldk::contamination {

std::string report_html(const Report& r) {
  HtmlPage page("rldk contamination card", r.train.index.empty() ? std::to_string(r.train.documents) +
                                                                     " training documents"
                                                               : "index " + r.train.index);
  bool dirty = r.contaminated();
  page.verdict(dirty ? "CONTAMINATED" : "CLEAN", headline(r), dirty ? ChartTone::Critical : ChartTone::Good);
  std::vector<HtmlPage::Tile> tiles;
  for (size_t s = 0; s < r.sets.size(); ++s) {
    const SetSummary& x = r.summaries[s];
    double rate = x.items ? static_cast<double>(x.full + x.partial) / static_cast<double>(x.items) : 0;
    tiles.push_back({r.sets[s].source, percent(rate),
                     std::to_string(x.full) + " full, " + std::to_string(x.partial) + " partial of " +
                         std::to_string(x.items),
                     rate > 0 ? ChartTone::Critical : ChartTone::Good});
  }
  page.tiles(tiles);
  page.heading("Eval sets");
  std::vector<std::vector<std::string>> rows;
  for (size_t s = 0; s < r.sets.size(); ++s) {
    const SetSummary& x = r.summaries[s];
    rows.push_back({r.sets[s].source, std::to_string(x.items), x.n ? std::to_string(x.n) + " (" + x.n_source + ")" : "-",
                    std::to_string(x.full), std::to_string(x.partial), std::to_string(x.clean),
                    std::to_string(x.by_method_ngram), std::to_string(x.by_method_llama2),
                    std::to_string(x.by_method_minhash)});
  }
  page.table({"eval set", "items", "n", "full", "partial", "clean", "by n-gram", "by Llama 2", "by MinHash"}, rows);
  size_t shown = 0;
  for (const auto& it : r.items) {
    if (it.verdict == Verdict::clean) continue;
    if (shown++ == 0) page.heading("Contaminated items");
    if (shown > 100) {
      page.muted("More items are listed in contamination.json.");
      break;
    }
    const EvalSet& set = r.sets[it.set];
    const EvalItem& item = set.items[it.item];
    std::vector<std::string> bullets;
    std::string body;
    for (const auto& t : it.texts) {
      if (t.verdict == Verdict::clean) continue;
      body += set.fields[t.field] + ": ";
      if (r.options.methods.ngram && t.ngram.checkable) body += percent(t.ngram.coverage) + " n-gram coverage; ";
      if (r.options.methods.llama2) body += "Llama 2 " + percent(t.llama2.fraction) + " (" + t.llama2.category + "); ";
      if (r.options.methods.minhash && t.minhash.train) {
        body += "near-duplicate of " + train_place(r, *t.minhash.train) + "; ";
      }
      const std::vector<Span>& spans = t.ngram.spans.empty() ? t.llama2.spans : t.ngram.spans;
      for (size_t k = 0; k < spans.size() && k < 5; ++k) {
        bullets.push_back("\"" + spans[k].quote + "\" - first in " + train_place(r, spans[k].train.doc) +
                          " at byte " + std::to_string(spans[k].train.char_offset));
      }
    }
    page.callout(set.files[item.file] + ":" + std::to_string(item.row + 1) + " - " + verdict_name(it.verdict), body,
                 bullets, it.verdict == Verdict::full ? ChartTone::Critical : ChartTone::Warning);
  }
  for (const auto& n : r.notes) page.muted(n);
  if (!r.diagnostics.empty()) {
    page.heading("Input problems");
    std::vector<std::string> lines;
    for (const auto& d : r.diagnostics.examples()) lines.push_back(to_string(d));
    page.bullet_list(lines);
  }
  return page.str();
}

}  // namespace rldk::contamination
