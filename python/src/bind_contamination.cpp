// rldk._core contamination functions: the check (local, or one shard of a cluster run and the merge), the persistent
// index, and the kernels themselves (tokenizer, n-gram hashes, MinHash, LSH parameters) so tests can hold them to
// independent oracles. rldk.contamination and rldk.contamination.ray wrap them.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "binding_support.h"
#include "rldk/contamination.h"

namespace nb = nanobind;
using namespace nb::literals;
namespace ct = rldk::contamination;

namespace {

// The options as keyword arguments of the Python wrapper (rldk.contamination.check), same names as the CLI's.
ct::CheckOptions options_from(const nb::dict& o) {
  ct::CheckOptions options;
  auto get = [&](const char* key) -> nb::handle { return o.contains(key) ? nb::handle(o[key]) : nb::handle(); };
  if (auto v = get("methods"); v.is_valid()) {
    options.methods = rldk_py::unwrap(ct::parse_methods(nb::cast<std::vector<std::string>>(v)));
  }
  if (auto v = get("ngram"); v.is_valid() && !v.is_none()) options.ngram.n = nb::cast<size_t>(v);
  if (auto v = get("boilerplate"); v.is_valid()) options.ngram.boilerplate_docs = nb::cast<uint32_t>(v);
  if (auto v = get("full_coverage"); v.is_valid()) options.ngram.full_coverage = nb::cast<double>(v);
  if (auto v = get("threshold"); v.is_valid()) options.minhash.threshold = nb::cast<double>(v);
  if (auto v = get("num_perm"); v.is_valid()) options.minhash.num_perm = nb::cast<size_t>(v);
  if (auto v = get("shingle"); v.is_valid()) options.minhash.shingle = nb::cast<size_t>(v);
  if (auto v = get("seed"); v.is_valid()) options.minhash.seed = nb::cast<uint64_t>(v);
  if (auto v = get("scheme"); v.is_valid()) options.minhash.scheme = rldk_py::unwrap(ct::parse_scheme(nb::cast<std::string>(v)));
  auto text = [&](const char* key, const char* fallback) {
    auto v = get(key);
    return v.is_valid() ? nb::cast<std::string>(v) : std::string(fallback);
  };
  auto lowercase = get("lowercase");
  options.normalize = rldk_py::unwrap(ct::parse_normalize(lowercase.is_valid() ? nb::cast<bool>(lowercase) : true,
                                                          text("punctuation", "strip"), text("digits", "keep")));
  if (auto v = get("text_cols"); v.is_valid()) options.columns.columns = nb::cast<std::vector<std::string>>(v);
  if (auto v = get("threads"); v.is_valid()) options.threads = nb::cast<unsigned>(v);
  return options;
}

std::vector<ct::EvalSet> read_sets(const std::vector<std::string>& eval, const ct::CheckOptions& options,
                                   rldk::Diagnostics& diagnostics) {
  std::vector<ct::EvalSet> sets;
  for (const auto& path : eval) sets.push_back(rldk_py::unwrap(ct::read_eval_set(path, options.columns, diagnostics)));
  return sets;
}

using Outputs = std::tuple<std::string, std::string, std::string, std::string, std::string, bool>;

Outputs outputs(ct::Report& report, const rldk::Diagnostics& eval_diagnostics) {
  report.diagnostics.merge(eval_diagnostics);
  return {ct::report_json(report).dump(), ct::report_markdown(report), ct::report_html(report),
          ct::clean_jsonl(report), ct::dirty_jsonl(report), report.contaminated()};
}

ct::NormalizeOptions normalize_from(bool lowercase, const std::string& punctuation, const std::string& digits) {
  return rldk_py::unwrap(ct::parse_normalize(lowercase, punctuation, digits));
}

}  // namespace

void rldk_py::bind_contamination(nb::module_& m) {
  m.def("contamination_check", [](const std::vector<std::string>& train, const std::vector<std::string>& eval,
                                  const std::string& index, const nb::dict& opts) {
        ct::CheckOptions options = options_from(opts);
        rldk::Diagnostics diagnostics;
        std::vector<ct::EvalSet> sets = read_sets(eval, options, diagnostics);
        rldk::Result<ct::Report> report = rldk::Error{rldk::ErrorCode::invalid_argument, "", ""};
        {
          nb::gil_scoped_release unlocked;
          report = index.empty() ? ct::check(train, std::move(sets), options)
                                 : ct::check_index(index, std::move(sets), options);
        }
        ct::Report r = unwrap(std::move(report));
        return outputs(r, diagnostics);
      }, "train"_a, "eval"_a, "index"_a, "options"_a,
      "(json, markdown, html, clean_jsonl, dirty_jsonl, contaminated) of eval sets against training data or an index.");

  m.def("contamination_training_files", [](const std::vector<std::string>& train) {
        return unwrap(ct::training_files(train));
      }, "train"_a, "The files the training paths stand for, in the order the check reads them.");

  m.def("contamination_shard", [](const std::vector<std::string>& files, uint32_t first_file,
                                  const std::vector<std::string>& eval, const nb::dict& opts) {
        ct::CheckOptions options = options_from(opts);
        rldk::Diagnostics diagnostics;
        std::vector<ct::EvalSet> sets = read_sets(eval, options, diagnostics);
        rldk::Result<std::string> partial = std::string();
        {
          nb::gil_scoped_release unlocked;
          partial = ct::check_shard(files, first_file, sets, options);
        }
        std::string bytes = unwrap(std::move(partial));
        return nb::bytes(bytes.data(), bytes.size());
      }, "files"_a, "first_file"_a, "eval"_a, "options"_a,
      "The partial result (bytes) of one shard of training files, numbered from first_file.");

  m.def("contamination_merge", [](const std::vector<std::string>& train, const std::vector<std::string>& eval,
                                  const std::vector<nb::bytes>& partials, const nb::dict& opts) {
        ct::CheckOptions options = options_from(opts);
        rldk::Diagnostics diagnostics;
        std::vector<ct::EvalSet> sets = read_sets(eval, options, diagnostics);
        std::vector<std::string> raw;
        for (const auto& p : partials) raw.emplace_back(p.c_str(), p.size());
        ct::Report r = unwrap(ct::merge_shards(train, std::move(sets), raw, options));
        return outputs(r, diagnostics);
      }, "train"_a, "eval"_a, "partials"_a, "options"_a, "The report of shards' partial results, in shard order.");

  m.def("contamination_build_index", [](const std::vector<std::string>& train, const std::vector<size_t>& sizes,
                                        const std::string& out, const nb::dict& opts) {
        ct::CheckOptions options = options_from(opts);
        rldk::Result<ct::IndexInfo> info = rldk::Error{rldk::ErrorCode::invalid_argument, "", ""};
        {
          nb::gil_scoped_release unlocked;
          info = ct::build_index(train, sizes, options, out);
        }
        ct::IndexInfo i = unwrap(std::move(info));
        nb::dict d;
        d["ngrams"] = i.ngrams;
        d["documents"] = i.documents;
        d["bytes"] = i.bytes;
        d["files"] = i.files;
        return d;
      }, "train"_a, "sizes"_a, "out"_a, "options"_a, "Writes a persistent n-gram index of the training data.");

  // Kernels, for tests and notebooks.
  m.def("contamination_tokenize", [](const std::string& text, bool lowercase, const std::string& punctuation,
                                     const std::string& digits) {
        std::vector<ct::Word> words;
        ct::tokenize(text, normalize_from(lowercase, punctuation, digits), words);
        std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> out;
        for (const auto& w : words) out.emplace_back(w.begin, w.end, w.hash);
        return out;
      }, "text"_a, "lowercase"_a = true, "punctuation"_a = "strip", "digits"_a = "keep",
      "Words as (begin byte, end byte, 64-bit hash of the normalised word).");
  m.def("contamination_normalize", [](const std::string& text, bool lowercase, const std::string& punctuation,
                                      const std::string& digits) {
        return ct::normalize(text, normalize_from(lowercase, punctuation, digits));
      }, "text"_a, "lowercase"_a = true, "punctuation"_a = "strip", "digits"_a = "keep");
  m.def("contamination_shingles32", [](const std::string& text, size_t k) {
        std::vector<ct::Word> words;
        ct::tokenize(text, ct::NormalizeOptions{}, words);
        std::vector<uint64_t> hashes;
        ct::shingle_hashes(words, k, hashes);
        std::vector<uint32_t> out;
        for (uint64_t h : hashes) out.push_back(static_cast<uint32_t>(h));
        return out;
      }, "text"_a, "k"_a = 5, "The 32-bit shingle values MinHash takes, in text order (duplicates kept).");
  m.def("contamination_permutations", [](size_t num_perm, uint64_t seed, const std::string& scheme) {
        ct::Permutations p = ct::minhash_permutations(num_perm, seed, unwrap(ct::parse_scheme(scheme)));
        return std::make_pair(p.a, p.b);
      }, "num_perm"_a = 128, "seed"_a = 1, "scheme"_a = "legacy");
  m.def("contamination_minhash", [](const std::vector<uint32_t>& shingles, size_t num_perm, uint64_t seed,
                                    const std::string& scheme) {
        std::vector<uint32_t> sig;
        ct::minhash_signature(shingles, ct::minhash_permutations(num_perm, seed, unwrap(ct::parse_scheme(scheme))),
                              sig);
        return sig;
      }, "shingles"_a, "num_perm"_a = 128, "seed"_a = 1, "scheme"_a = "legacy");
  m.def("contamination_lsh_parameters", &ct::lsh_parameters, "threshold"_a, "num_perm"_a,
        "false_positive_weight"_a = 0.5, "false_negative_weight"_a = 0.5);
}
