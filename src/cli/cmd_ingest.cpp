// rldk ingest SRC... -o OUT: convert any run log to canonical long-form JSONL or wide CSV.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "rldk/output_file.h"
#include "rldk/reader.h"
#include "rldk/terminal_text.h"
#include "rldk/run_writer.h"

namespace rldk::cli {
namespace {

struct IngestOptions {
  std::vector<std::string> sources;
  std::string output;
  std::string format;  // jsonl | csv; default from the output's extension
  bool raw_names = false;
  std::string run_id;
  std::string input_format = "auto";
  std::string adapter;  // the older tool's --adapter NAME: accepted, the content decides
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void report_diagnostics(const Diagnostics& diagnostics) {
  if (diagnostics.empty()) return;
  std::fprintf(stderr, "rldk ingest: %llu problems in the input (kept going):\n",
               static_cast<unsigned long long>(diagnostics.total()));
  for (const auto& d : diagnostics.examples()) std::fprintf(stderr, "  %s\n", to_string(d).c_str());
}

int run_ingest(const IngestOptions& opts) {
  // The format from the name under any compression suffix: run.csv.gz is a CSV.
  std::string name = opts.output;
  for (const char* suffix : {".gz", ".zst", ".zstd"}) {
    if (ends_with(name, suffix)) name.resize(name.size() - std::string(suffix).size());
  }
  std::string format = opts.format.empty() ? (ends_with(name, ".csv") ? "csv" : "jsonl") : opts.format;
  ReadOptions read;
  read.canonicalize = !opts.raw_names;
  read.run_id = opts.run_id;
  parse_format_name(opts.input_format, read.format);  // validated by the option's check
  // Refused before anything is opened: writing a file that is being read would destroy it, and writing into a
  // folder that is being read would feed the output back in as input.
  Status allowed = check_output_outside_inputs(opts.output, opts.sources);
  if (!allowed.ok()) {
    std::fprintf(stderr, "rldk ingest: -o %s\n", to_string(allowed.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  std::optional<AtomicOutputFile> file;
  if (opts.output != "-") {
    auto opened = AtomicOutputFile::open(opts.output);
    if (!opened.ok()) {
      std::fprintf(stderr, "rldk ingest: %s\n", to_string(opened.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    file.emplace(std::move(opened).value());
  }
  // Converted data piped into another program or a file goes out byte-exact; only a terminal gets the escaping
  // that keeps control characters in metric names from acting on it.
  std::FILE* out = file ? file->stream() : ::isatty(STDOUT_FILENO) ? stdout : raw_stdout();
  int code = EXIT_OK;
  if (format == "jsonl") {
    // Streamed: memory does not grow with the input.
    LongJsonlSink sink(out);
    for (const auto& source : opts.sources) {
      Diagnostics diagnostics;
      Status status = read_source(source, read, sink, diagnostics);
      report_diagnostics(diagnostics);
      if (!status.ok()) {
        std::fprintf(stderr, "rldk ingest: %s\n", to_string(status.error()).c_str());
        code = EXIT_INPUT_ERROR;
      }
    }
    if (sink.failed()) {
      std::fprintf(stderr, "rldk ingest: %s: write failed\n", opts.output.c_str());
      return EXIT_INPUT_ERROR;
    }
  } else {
    std::vector<Run> runs;
    for (const auto& source : opts.sources) {
      auto read_result = read_runs(source, read);
      if (!read_result.ok()) {
        std::fprintf(stderr, "rldk ingest: %s\n", to_string(read_result.error()).c_str());
        code = EXIT_INPUT_ERROR;
        continue;
      }
      for (auto& run : read_result.value()) {
        report_diagnostics(run.diagnostics);
        runs.push_back(std::move(run));
      }
    }
    Status status = write_wide_csv(runs, out);
    if (!status.ok()) {
      std::fprintf(stderr, "rldk ingest: %s: %s\n", opts.output.c_str(), status.error().message.c_str());
      return EXIT_INPUT_ERROR;
    }
  }
  Status finished = file ? file->commit() : std::fflush(out) == 0 ? Status(Ok{}) : Error{ErrorCode::io, "write failed", "-"};
  if (!finished.ok()) {
    std::fprintf(stderr, "rldk ingest: %s\n", to_string(finished.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  return code;
}

}  // namespace

void add_ingest_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<IngestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ingest", "Convert run logs to canonical long-form JSONL (streamed) or a wide CSV (one row per step).");
  cmd->add_option("sources", opts->sources, "Run logs: files (gzip/zstd too), folders of runs, or - for stdin")
      ->required();
  cmd->add_option("-o,--output", opts->output, "Output file (.gz or .zst: compressed), or - for stdout; written whole or not at all")->required();
  cmd->add_option("--format", opts->format, "jsonl or csv (default: from the output's extension, else jsonl)")
      ->check(CLI::IsMember({"jsonl", "csv"}));
  cmd->add_flag("--raw-names", opts->raw_names, "Keep metric names as logged instead of canonical names");
  cmd->add_option("--run-id", opts->run_id, "Run id for points that carry none (default: from the file name)");
  cmd->add_option("--input-format", opts->input_format, "Read as this format instead of detecting it")
      ->check(CLI::IsMember({"auto", "jsonl", "json", "csv", "tsv", "console"}));
  // The older tool picked a reader by name; here the format and the framework's metric names are recognised from
  // the content, so the name is only checked to be one the older tool knew.
  cmd->add_option("--adapter", opts->adapter,
                  "Accepted for the older tool's command lines (trl, openrlhf, verl, wandb, custom_jsonl, ...); the "
                  "format and the metric names are detected from the content")
      ->check(CLI::IsMember({"trl", "openrlhf", "verl", "wandb", "custom_jsonl", "flexible", "grpo", "tensorboard",
                             "mlflow"}));
  cmd->callback([opts, &exit_code] { exit_code = run_ingest(*opts); });
}

}  // namespace rldk::cli
