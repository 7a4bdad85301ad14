// rldk info SRC...: what is in a run log, as rldk reads it.
#include <cstdio>

#include "commands.h"
#include "report_output.h"
#include "rldk/report.h"
#include "rldk/summary.h"

namespace rldk::cli {
namespace {

struct InfoOptions {
  std::vector<std::string> sources;
  bool json = false;
  bool raw_names = false;
  std::string run_id;
  std::string input_format = "auto";
  unsigned threads = 0;
};

int run_info(const InfoOptions& opts) {
  ReadOptions read;
  read.canonicalize = !opts.raw_names;
  read.run_id = opts.run_id;
  parse_format_name(opts.input_format, read.format);  // validated by the option's check
  std::vector<RunSummary> runs;
  Json errors = Json::Array{};
  int code = EXIT_OK;
  for (const auto& source : opts.sources) {
    auto summaries = summarize_source(source, read, opts.threads);
    if (!summaries.ok()) {
      std::fprintf(stderr, "rldk info: %s\n", to_string(summaries.error()).c_str());
      Json e;
      e["source"] = source;
      e["message"] = summaries.error().message;
      errors.push_back(e);
      code = EXIT_INPUT_ERROR;
      continue;
    }
    for (auto& s : summaries.value()) runs.push_back(std::move(s));
  }
  if (opts.json) {
    print_text(stdout, info_json_text(runs, errors));
  } else if (!runs.empty()) {
    print_text(stdout, info_text(runs));
  }
  return code;
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Show what a run log holds: detected format, run id, step range, restarts, and per metric the count, "
              "min, max, last value and non-finite count.");
  cmd->add_option("sources", opts->sources, "Run logs: files (gzip/zstd too), folders of runs, or - for stdin")
      ->required();
  cmd->add_flag("--json", opts->json, "Print the rldk.info/v1 JSON report instead of text");
  cmd->add_flag("--raw-names", opts->raw_names, "Keep metric names as logged instead of canonical names");
  cmd->add_option("--threads", opts->threads,
                  "Files of a folder of runs read at once (default 0: one per core); the report is the same for any "
                  "number");
  cmd->add_option("--run-id", opts->run_id, "Run id for points that carry none (default: from the file name)");
  cmd->add_option("--input-format", opts->input_format, "Read as this format instead of detecting it")
      ->check(CLI::IsMember({"auto", "jsonl", "json", "csv", "tsv", "console"}));
  cmd->callback([opts, &exit_code] { exit_code = run_info(*opts); });
}

}  // namespace rldk::cli
