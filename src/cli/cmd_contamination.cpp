// rldk contamination --train T... --eval E...: are eval items in the training data? Exact n-gram overlap (GPT-3's
// rule), Llama 2's contaminated-token fraction and MinHash near-duplicates; prints the report, writes it with --out
// (JSON, Markdown, the HTML card, and the eval rows split into clean.jsonl / dirty.jsonl for re-scoring).
// `rldk contamination index` builds a persistent n-gram index of the training data; `--index` checks against it.
// `--ray ADDRESS` hands the same arguments to the Python entry point (python -m rldk.contamination.ray): Ray's
// driver API is Python, and the shards run the same native kernels through the binding.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

#include "commands.h"
#include "python_entry.h"
#include "report_output.h"
#include "rldk/contamination.h"

namespace rldk::cli {
namespace {
namespace ct = contamination;

struct ContaminationCliOptions {
  std::vector<std::string> train, eval, text_cols, methods{"all"};
  std::string index, out, ray;
  size_t ngram = 0;
  uint32_t boilerplate = 10;
  double full_coverage = 0.8;
  double threshold = 0.8;
  size_t num_perm = 128, shingle = 5;
  uint64_t seed = 1;
  std::string scheme = "legacy";
  bool keep_case = false;
  std::string punctuation = "strip", digits = "keep";
  unsigned threads = 0;
  bool json = false, gate = false, quiet = false;
  // index subcommand
  std::string index_out;
  std::string sizes = "13,11";
};

// Progress on a terminal only: a line rewritten in place with the bytes and documents read so far.
std::function<void(uint64_t, uint64_t)> progress_line(const char* me, bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return {};
  return [me](uint64_t bytes, uint64_t docs) {
    std::fprintf(stderr, "\r%s: %.1f MB of training text, %llu documents read", me, bytes / 1e6,
                 static_cast<unsigned long long>(docs));
    std::fflush(stderr);
  };
}

bool build_options(const char* me, const ContaminationCliOptions& o, ct::CheckOptions& options) {
  auto methods = ct::parse_methods(o.methods);
  auto normalize = ct::parse_normalize(!o.keep_case, o.punctuation, o.digits);
  for (const Error* e : {methods.ok() ? nullptr : &methods.error(), normalize.ok() ? nullptr : &normalize.error()}) {
    if (e) {
      std::fprintf(stderr, "%s: %s\n", me, e->message.c_str());
      return false;
    }
  }
  options.methods = methods.value();
  options.normalize = normalize.value();
  options.columns.columns = o.text_cols;
  if (o.ngram) options.ngram.n = o.ngram;
  options.ngram.boilerplate_docs = o.boilerplate;
  options.ngram.full_coverage = o.full_coverage;
  options.minhash.threshold = o.threshold;
  options.minhash.num_perm = o.num_perm;
  options.minhash.shingle = o.shingle;
  options.minhash.seed = o.seed;
  options.minhash.scheme = ct::parse_scheme(o.scheme).value();  // the flag's check allows only the two names
  options.threads = o.threads;
  options.progress = progress_line(me, o.quiet || o.json);
  return true;
}

// Hands the command line to `python -m rldk.contamination.ray`, with --ray ADDRESS as --address ADDRESS.
int run_on_ray(const char* me, int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) {  // argv[1] is the command name
    std::string a = argv[i];
    if (a == "--ray") {
      args.push_back("--address");
    } else if (a.rfind("--ray=", 0) == 0) {
      args.push_back("--address=" + a.substr(6));
    } else {
      args.push_back(a);
    }
  }
  return exec_python_module(me, "rldk.contamination.ray", args, "Python with rldk and ray installed (for --ray)");
}

int run_check(const ContaminationCliOptions& o, const char* me) {
  if (o.eval.empty()) {
    std::fprintf(stderr, "%s: name the eval sets to check with --eval FILE...\n", me);
    return EXIT_INPUT_ERROR;
  }
  if (o.train.empty() == o.index.empty()) {
    std::fprintf(stderr, "%s: give the training data with --train FILE... or an index with --index FILE (one of them)\n",
                 me);
    return EXIT_INPUT_ERROR;
  }
  ct::CheckOptions options;
  if (!build_options(me, o, options)) return EXIT_INPUT_ERROR;
  Diagnostics diagnostics;
  std::vector<ct::EvalSet> sets;
  for (const auto& path : o.eval) {
    auto set = ct::read_eval_set(path, options.columns, diagnostics);
    if (!set.ok()) {
      std::fprintf(stderr, "%s: %s\n", me, to_string(set.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    sets.push_back(std::move(set).value());
  }
  auto report = o.index.empty() ? ct::check(o.train, std::move(sets), options)
                                : ct::check_index(o.index, std::move(sets), options);
  if (options.progress) std::fprintf(stderr, "\n");
  if (!report.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(report.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  report->diagnostics.merge(diagnostics);
  for (const auto& d : report->diagnostics.examples()) {
    std::fprintf(stderr, "%s: warning: %s\n", me, to_string(d).c_str());
  }
  std::string json = ct::report_json(report.value()).dump();
  std::string markdown = ct::report_markdown(report.value());
  if (!o.out.empty()) {
    std::vector<std::string> inputs = o.train;
    inputs.insert(inputs.end(), o.eval.begin(), o.eval.end());
    if (!o.index.empty()) inputs.push_back(o.index);
    if (!write_report_folder(me, o.out, inputs,
                             {{"contamination.json", json},
                              {"contamination.md", markdown},
                              {"contamination.html", ct::report_html(report.value())},
                              {"clean.jsonl", ct::clean_jsonl(report.value())},
                              {"dirty.jsonl", ct::dirty_jsonl(report.value())}})) {
      return EXIT_INPUT_ERROR;
    }
  }
  print_text(stdout, o.json ? json + "\n" : markdown);
  if (o.gate && report->contaminated()) {
    std::fprintf(stderr, "%s: gate: eval items were found in the training data\n", me);
    return EXIT_FINDINGS;
  }
  return EXIT_OK;
}

int run_index(const ContaminationCliOptions& o) {
  const char* me = "rldk contamination index";
  ct::CheckOptions options;
  if (!build_options(me, o, options)) return EXIT_INPUT_ERROR;
  std::vector<size_t> sizes;
  std::stringstream ss(o.sizes);
  std::string n;
  while (std::getline(ss, n, ',')) {
    char* end = nullptr;
    long v = std::strtol(n.c_str(), &end, 10);
    if (n.empty() || *end != '\0' || v < 1 || v > 1000) {
      std::fprintf(stderr, "%s: --ngram takes lengths 1..1000 separated by commas, got '%s'\n", me, o.sizes.c_str());
      return EXIT_INPUT_ERROR;
    }
    sizes.push_back(static_cast<size_t>(v));
  }
  auto info = ct::build_index(o.train, sizes, options, o.index_out);
  if (options.progress) std::fprintf(stderr, "\n");
  if (!info.ok()) {
    std::fprintf(stderr, "%s: %s\n", me, to_string(info.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  std::printf("%s: %llu distinct n-grams of %llu documents (%llu bytes, %zu files) written to %s\n", me,
              static_cast<unsigned long long>(info->ngrams), static_cast<unsigned long long>(info->documents),
              static_cast<unsigned long long>(info->bytes), info->files.size(), o.index_out.c_str());
  return EXIT_OK;
}

void add_normalize_options(CLI::App* cmd, const std::shared_ptr<ContaminationCliOptions>& o) {
  cmd->add_option("--text-col", o->text_cols,
                  "A column holding text to check; repeatable. Default: prompt-like and answer-like columns (prompt, "
                  "question, problem, input, text, answer, solution, ground_truth, reward_model/ground_truth, "
                  "completion, ...), so an RL pool's prompts and reference answers are both checked. Nested JSON "
                  "fields are named with '/'")
      ->allow_extra_args(false);
  cmd->add_flag("--keep-case", o->keep_case, "Do not lower-case before comparing");
  cmd->add_option("--punctuation", o->punctuation, "strip (ignored, as GPT-3 and lm-eval-harness) or keep (a word each)")
      ->capture_default_str()
      ->check(CLI::IsMember({"strip", "keep"}));
  cmd->add_option("--digits", o->digits, "keep (numbers must match) or mask (every digit reads as 0)")
      ->capture_default_str()
      ->check(CLI::IsMember({"keep", "mask"}));
  cmd->add_flag("--quiet", o->quiet, "No progress line");
}

void add_check_options(CLI::App* cmd, const std::shared_ptr<ContaminationCliOptions>& o, bool older) {
  cmd->add_option("--train", o->train,
                  "Training data: JSONL, CSV, Parquet, Arrow (a Hugging Face datasets save_to_disk folder), W&B "
                  "tables or .txt (one document per line), or folders of them; each text cell of a row is one training "
                  "document");
  cmd->add_option(older ? "--eval,--val" : "--eval", o->eval,
                  "Eval sets to check (same formats; one set per path, each row an item)");
  cmd->add_option("--index", o->index, "Check against an index built by `rldk contamination index` instead of --train");
  cmd->add_option("--method", o->methods, "ngram, llama2, minhash or all (default); repeatable or comma-separated")
      ->allow_extra_args(false);
  cmd->add_option("--ngram", o->ngram,
                  "N-gram length of the n-gram method (default: GPT-3's rule, the eval set's 5th-percentile length "
                  "in words clamped to 8..13)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--boilerplate", o->boilerplate,
                  "Ignore n-grams found in more than this many training documents")->capture_default_str();
  cmd->add_option("--full-coverage", o->full_coverage,
                  "Share of an eval text's words in matched n-grams from which it counts as fully contaminated")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--threshold", o->threshold, "MinHash: Jaccard similarity from which a training text is a near-duplicate")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_option("--num-perm", o->num_perm, "MinHash permutations")->capture_default_str()->check(CLI::Range(1, 4096));
  cmd->add_option("--shingle", o->shingle, "MinHash shingle length in words")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", o->seed, "Seed of the MinHash permutations")->capture_default_str();
  cmd->add_option("--minhash-scheme", o->scheme,
                  "MinHash permutations as datasketch's scheme of that name: legacy (a*h+b mod 2^61-1, methods.md) or "
                  "affine32 (datasketch 2.0's default, several times faster)")
      ->capture_default_str()
      ->check(CLI::IsMember({"legacy", "affine32"}));
  add_normalize_options(cmd, o);
  cmd->add_option("--threads", o->threads, "Worker threads (default: every core)");
  cmd->add_flag("--json", o->json, "Print the rldk.contamination/v1 JSON document instead of Markdown");
  cmd->add_option("--out", o->out,
                  "Also write DIR/contamination.json, contamination.md, the card contamination.html, and the eval "
                  "rows split into clean.jsonl and dirty.jsonl (re-score an eval on its clean part)");
  cmd->add_flag("--gate", o->gate, "Exit 1 when any eval item is contaminated, 0 when none is (2 on errors)");
  if (older) return;  // the older tool's command has no cluster mode
  cmd->add_option("--ray", o->ray,
                  "Run on a Ray cluster (ADDRESS, or 'local' for a local one): shards the training files across "
                  "tasks running the same native kernels (python -m rldk.contamination.ray)");
}

}  // namespace

void add_contamination_command(CLI::App& app, int& exit_code, int argc, char** argv) {
  auto opts = std::make_shared<ContaminationCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "contamination",
      "Are eval items in the training data? Exact n-gram overlap (GPT-3's 13-gram rule with N from the eval "
      "lengths), Llama 2's contaminated-token fraction and MinHash near-duplicates, per eval item clean / partial / "
      "full with the matched spans and the training document they come from; --gate for CI.");
  add_check_options(cmd, opts, false);
  auto index_opts = std::make_shared<ContaminationCliOptions>();
  CLI::App* index = cmd->add_subcommand(
      "index", "Build a persistent index of the training data's n-grams once, then check many eval sets with --index.");
  index->add_option("--train", index_opts->train, "Training data (as for the check)")->required();
  index->add_option("-o,--output", index_opts->index_out, "Index file to write")->required();
  index->add_option("--ngram", index_opts->sizes,
                    "N-gram lengths to hold, comma-separated (11 is Llama 2's; eval sets use the nearest shorter one)")
      ->capture_default_str();
  add_normalize_options(index, index_opts);
  index->callback([index_opts, &exit_code] { exit_code = run_index(*index_opts); });
  cmd->callback([opts, index, &exit_code, argc, argv] {
    if (index->parsed()) return;
    if (!opts->ray.empty()) {
      exit_code = run_on_ray("rldk contamination", argc, argv);
      return;
    }
    exit_code = run_check(*opts, "rldk contamination");
  });
  // The older tool's `rldk data-contamination --train T --val V`: the same check, --val naming the eval set.
  auto older = std::make_shared<ContaminationCliOptions>();
  CLI::App* data = app.add_subcommand("data-contamination", "The older tool's name of `rldk contamination`");
  data->group("");
  add_check_options(data, older, true);
  data->callback([older, &exit_code] { exit_code = run_check(*older, "rldk data-contamination"); });
}

}  // namespace rldk::cli
