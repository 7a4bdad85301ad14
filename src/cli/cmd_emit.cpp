// rldk emit --to PATH --name N --value V --step S: append one canonical event to a metrics file, for shell scripts
// (the same line rldk.EventWriter writes, so `rldk monitor PATH` sees it at once).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.h"
#include "rldk/event_writer.h"

namespace rldk::cli {
namespace {

struct EmitOptions {
  std::string to;
  std::string name;
  std::string value;  // parsed here: NaN and infinities are observations too (written as Python's json does)
  int64_t step = 0;
  std::string run_id;
};

int run_emit(const EmitOptions& opts) {
  const char* me = "rldk emit";
  if (opts.name.empty()) {
    std::fprintf(stderr, "%s: --name is empty; give the metric's name (e.g. policy/kl)\n", me);
    return EXIT_INPUT_ERROR;
  }
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(opts.value.c_str(), &end);
  if (opts.value.empty() || end == nullptr || *end != '\0' || errno == ERANGE) {
    std::fprintf(stderr, "%s: --value %s: not a number (nan and inf are accepted)\n", me, opts.value.c_str());
    return EXIT_INPUT_ERROR;
  }
  auto writer = EventWriter::open(opts.to, opts.run_id);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s: --to %s\n", me, to_string(writer.error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  Status logged = writer.value()->log(opts.step, opts.name, value);
  Status closed = writer.value()->close();
  if (!logged.ok() || !closed.ok()) {
    std::fprintf(stderr, "%s: --to %s\n", me, to_string((!logged.ok() ? logged : closed).error()).c_str());
    return EXIT_INPUT_ERROR;
  }
  return EXIT_OK;
}

}  // namespace

void add_emit_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<EmitOptions>();
  CLI::App* cmd = app.add_subcommand(
      "emit", "Append one metric value to a metrics file as a canonical JSONL event (for shell scripts; in Python "
              "use rldk.EventWriter). `rldk monitor FILE` follows the file.");
  cmd->add_option("--to", opts->to, "Metrics file to append to (created with its folders if missing)")->required();
  cmd->add_option("--name", opts->name, "Metric name, as logged or canonical (e.g. kl or policy/kl)")->required();
  cmd->add_option("--value", opts->value, "The value (a number; nan, inf and -inf are kept as observations)")
      ->required();
  cmd->add_option("--step", opts->step, "Training step (a whole number)")->required();
  cmd->add_option("--run-id", opts->run_id, "Run id to record with the event");
  cmd->callback([opts, &exit_code] { exit_code = run_emit(*opts); });
}

}  // namespace rldk::cli
