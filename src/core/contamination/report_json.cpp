// The rldk.contamination/v1 document (docs/contamination.md): the options and normalisation used, the training
// data, per eval set the n-gram length and rates, per eval item its verdict and, per checked field, each method's
// figures and matched spans. No timings or thread counts: the same inputs give the same bytes on any machine.
#include "rldk/contamination.h"

namespace rldk::contamination {
namespace {

Json strings(const std::vector<std::string>& v) {
  Json j = Json::Array{};
  for (const auto& s : v) j.push_back(s);
  return j;
}

std::string at(const std::vector<std::string>& v, size_t i) { return i < v.size() ? v[i] : std::string("?"); }

Json place_json(const Report& r, const DocRef& d) {
  Json j = Json::Object{};
  j["file"] = at(r.train.files, d.file);
  j["row"] = d.row + 1;
  j["field"] = at(r.train.fields, d.field);
  return j;
}

Json span_json(const Report& r, const Span& s) {
  Json j = Json::Object{};
  j["begin"] = s.begin;
  j["end"] = s.end;
  j["words"] = s.words;
  j["quote"] = s.quote;
  Json t = place_json(r, s.train.doc);
  t["offset"] = s.train.char_offset;
  t["word_offset"] = s.train.word_offset;
  t["documents"] = s.train_docs;
  j["train"] = t;
  return j;
}

Json spans_json(const Report& r, const std::vector<Span>& spans) {
  Json j = Json::Array{};
  for (const auto& s : spans) j.push_back(span_json(r, s));
  return j;
}

Json options_json(const Report& r) {
  const CheckOptions& o = r.options;
  Json j = Json::Object{};
  Json norm = Json::Object{};
  norm["lowercase"] = o.normalize.lowercase;
  norm["punctuation"] = o.normalize.punctuation == Punctuation::strip ? "strip" : "keep";
  norm["digits"] = o.normalize.digits == Digits::keep ? "keep" : "mask";
  norm["tokenizer"] = "unicode-words";
  j["normalize"] = norm;
  j["text_columns"] = strings(o.columns.columns.empty() ? DEFAULT_TEXT_COLUMNS : o.columns.columns);
  if (o.methods.ngram) {
    Json n = Json::Object{};
    n["n"] = o.ngram.n ? Json(static_cast<uint64_t>(*o.ngram.n)) : Json(nullptr);
    n["min_n"] = static_cast<uint64_t>(o.ngram.min_n);
    n["max_n"] = static_cast<uint64_t>(o.ngram.max_n);
    n["length_percentile"] = o.ngram.length_percentile;
    n["boilerplate_docs"] = o.ngram.boilerplate_docs;
    n["full_coverage"] = o.ngram.full_coverage;
    j["ngram"] = n;
  }
  if (o.methods.llama2) {
    Json l = Json::Object{};
    l["min_tokens"] = static_cast<uint64_t>(o.llama2.min_tokens);
    l["skip_budget"] = static_cast<uint64_t>(o.llama2.skip_budget);
    l["exact_prefix"] = static_cast<uint64_t>(o.llama2.exact_prefix);
    l["clean_below"] = o.llama2.clean_below;
    l["dirty_above"] = o.llama2.dirty_above;
    j["llama2"] = l;
  }
  if (o.methods.minhash) {
    Json m = Json::Object{};
    m["num_perm"] = static_cast<uint64_t>(o.minhash.num_perm);
    m["seed"] = o.minhash.seed;
    m["shingle_words"] = static_cast<uint64_t>(o.minhash.shingle);
    m["threshold"] = o.minhash.threshold;
    m["bands"] = static_cast<uint64_t>(r.bands_rows.first);
    m["rows"] = static_cast<uint64_t>(r.bands_rows.second);
    m["scheme"] = scheme_name(o.minhash.scheme);
    m["permutations"] = o.minhash.scheme == MinHashScheme::legacy
                            ? "a*h+b mod 2^64 mod 2^61-1, 32 bits (datasketch legacy); a, b from splitmix64(seed)"
                            : "a*fmix32(h)+b mod 2^32 (datasketch affine32); a, b from splitmix64(seed)";
    j["minhash"] = m;
  }
  return j;
}

Json text_json(const Report& r, const EvalSet& set, const TextResult& t) {
  const Methods& m = r.options.methods;
  Json j = Json::Object{};
  j["field"] = at(set.fields, t.field);
  j["verdict"] = verdict_name(t.verdict);
  if (m.ngram) {
    Json n = Json::Object{};
    n["n"] = static_cast<uint64_t>(t.ngram.n);
    n["checkable"] = t.ngram.checkable;
    n["words"] = t.ngram.words;
    n["covered"] = t.ngram.covered;
    n["coverage"] = t.ngram.coverage;
    n["verdict"] = verdict_name(t.ngram.verdict);
    n["spans"] = spans_json(r, t.ngram.spans);
    j["ngram"] = n;
  }
  if (m.llama2) {
    Json l = Json::Object{};
    l["tokens"] = t.llama2.tokens;
    l["contaminated"] = t.llama2.contaminated;
    l["fraction"] = t.llama2.fraction;
    l["category"] = t.llama2.category;
    l["verdict"] = verdict_name(t.llama2.verdict);
    l["spans"] = spans_json(r, t.llama2.spans);
    j["llama2"] = l;
  }
  if (m.minhash) {
    Json h = Json::Object{};
    h["verdict"] = verdict_name(t.minhash.verdict);
    h["jaccard"] = t.minhash.jaccard;
    h["estimate"] = t.minhash.estimate;
    h["near_duplicates"] = t.minhash.near_duplicates;
    h["train"] = t.minhash.train ? place_json(r, *t.minhash.train) : Json(nullptr);
    j["minhash"] = h;
  }
  return j;
}

}  // namespace

Json report_json(const Report& r) {
  Json j = Json::Object{};
  j["schema"] = CONTAMINATION_SCHEMA;
  Json methods = Json::Array{};
  if (r.options.methods.ngram) methods.push_back("ngram");
  if (r.options.methods.llama2) methods.push_back("llama2");
  if (r.options.methods.minhash) methods.push_back("minhash");
  j["methods"] = methods;
  j["options"] = options_json(r);
  Json train = Json::Object{};
  train["sources"] = strings(r.train.sources);
  train["files"] = strings(r.train.files);
  train["documents"] = r.train.documents;
  train["bytes"] = r.train.bytes;
  train["index"] = r.train.index.empty() ? Json(nullptr) : Json(r.train.index);
  j["train"] = train;
  Json sets = Json::Array{};
  for (size_t s = 0; s < r.sets.size(); ++s) {
    const SetSummary& x = r.summaries[s];
    Json o = Json::Object{};
    o["source"] = r.sets[s].source;
    o["files"] = strings(r.sets[s].files);
    o["n"] = static_cast<uint64_t>(x.n);
    o["n_source"] = x.n_source;
    o["percentile_words"] = x.percentile_words;
    o["items"] = static_cast<uint64_t>(x.items);
    o["texts"] = static_cast<uint64_t>(x.texts);
    o["too_short"] = static_cast<uint64_t>(x.too_short);
    o["full"] = static_cast<uint64_t>(x.full);
    o["partial"] = static_cast<uint64_t>(x.partial);
    o["clean"] = static_cast<uint64_t>(x.clean);
    o["contaminated_rate"] = x.items ? static_cast<double>(x.full + x.partial) / static_cast<double>(x.items) : 0.0;
    Json by = Json::Object{};
    by["ngram"] = static_cast<uint64_t>(x.by_method_ngram);
    by["llama2"] = static_cast<uint64_t>(x.by_method_llama2);
    by["minhash"] = static_cast<uint64_t>(x.by_method_minhash);
    o["contaminated_by_method"] = by;
    sets.push_back(o);
  }
  j["eval_sets"] = sets;
  Json items = Json::Array{};
  for (const auto& it : r.items) {
    const EvalSet& set = r.sets[it.set];
    const EvalItem& item = set.items[it.item];
    Json o = Json::Object{};
    o["set"] = static_cast<uint64_t>(it.set);
    o["file"] = at(set.files, item.file);
    o["row"] = item.row + 1;
    o["verdict"] = verdict_name(it.verdict);
    Json texts = Json::Array{};
    for (const auto& t : it.texts) texts.push_back(text_json(r, set, t));
    o["texts"] = texts;
    items.push_back(o);
  }
  j["items"] = items;
  j["boilerplate_ngrams_ignored"] = r.boilerplate_ngrams;
  j["notes"] = strings(r.notes);
  j["contaminated"] = r.contaminated();
  Json diag = Json::Object{};
  Json counts = Json::Object{};
  for (const auto& [kind, count] : r.diagnostics.counts()) counts[kind] = count;
  diag["counts"] = counts;
  Json examples = Json::Array{};
  for (const auto& d : r.diagnostics.examples()) examples.push_back(to_string(d));
  diag["examples"] = examples;
  j["diagnostics"] = diag;
  return j;
}

std::string clean_jsonl(const Report& r) {
  std::string out;
  for (const auto& it : r.items) {
    if (it.verdict == Verdict::clean) out += r.sets[it.set].items[it.item].record + "\n";
  }
  return out;
}

std::string dirty_jsonl(const Report& r) {
  std::string out;
  for (const auto& it : r.items) {
    if (it.verdict != Verdict::clean) out += r.sets[it.set].items[it.item].record + "\n";
  }
  return out;
}

}  // namespace rldk::contamination
