// rldk lineage record | verify | show: datasets by content (every byte hashed) and the transforms between them.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "report_output.h"
#include "rldk/output_file.h"
#include "rldk/provenance.h"

namespace rldk::cli {
namespace {

int fail(const char* command, const Error& error) {
  std::fprintf(stderr, "rldk lineage %s: %s\n", command, to_string(error).c_str());
  return EXIT_INPUT_ERROR;
}

struct RecordCli {
  provenance::LineageRecordOptions options;
  std::string manifest;
};

struct VerifyCli {
  std::string manifest;
  bool json = false;
  unsigned threads = 0;
};

struct ShowCli {
  std::string manifest;
  std::string format = "text";
  std::string html;
};

int run_record(const RecordCli& cli) {
  auto r = provenance::lineage_record(cli.manifest, cli.options);
  if (!r.ok()) return fail("record", r.error());
  print_text(stdout, "recorded " + r->name + ": " + std::to_string(r->files) + (r->files == 1 ? " file, " : " files, ") +
                         std::to_string(r->bytes) + " bytes, root " + r->root + " in " + cli.manifest + "\n");
  return EXIT_OK;
}

int run_verify(const VerifyCli& cli) {
  auto v = provenance::lineage_verify(cli.manifest, cli.threads);
  if (!v.ok()) return fail("verify", v.error());
  print_text(stdout, cli.json ? provenance::lineage_verification_json(v.value()).dump() + "\n"
                              : provenance::lineage_verification_text(v.value()));
  return v->ok() ? EXIT_OK : EXIT_FINDINGS;
}

int run_show(const ShowCli& cli) {
  if (!cli.html.empty()) {
    auto page = provenance::lineage_html(cli.manifest);
    if (!page.ok()) return fail("show", page.error());
    if (auto w = write_file_atomic(cli.html, page.value()); !w.ok()) return fail("show", w.error());
  }
  auto format = cli.format == "mermaid" ? provenance::GraphFormat::mermaid
                : cli.format == "dot"   ? provenance::GraphFormat::dot
                                        : provenance::GraphFormat::text;
  auto text = provenance::lineage_graph(cli.manifest, format);
  if (!text.ok()) return fail("show", text.error());
  print_text(stdout, text.value());
  return EXIT_OK;
}

}  // namespace

void add_lineage_command(CLI::App& app, int& exit_code) {
  CLI::App* lineage = app.add_subcommand(
      "lineage", "Data lineage: record datasets by content hash (every byte, XXH3-128), verify them later, show the "
                 "graph of transforms between them.");
  lineage->require_subcommand(1);

  auto rec = std::make_shared<RecordCli>();
  CLI::App* record = lineage->add_subcommand(
      "record", "Hash the files and folders of a dataset into a lineage manifest (created or updated). With --from, "
                "also record the transform that made it from other datasets.");
  record->add_option("paths", rec->options.paths, "Files or folders that make up the dataset")->required();
  record->add_option("-o,--output", rec->manifest, "The lineage manifest to write (JSON)")->required();
  record->add_option("--name", rec->options.name, "Dataset name (default: the first path's last component)");
  record->add_option("--from", rec->options.inputs,
                     "Datasets it was made from: names in the manifest, or files/folders (hashed and added)");
  record->add_option("--cmd", rec->options.command, "The command that made it (recorded as given)");
  record->add_option("--script", rec->options.script, "The script that made it (its bytes are hashed)");
  record->add_option("--transform", rec->options.transform, "Name of the transform (default: \"make NAME\")");
  record->add_option("--threads", rec->options.threads, "Hashing threads (0: one per core)");
  record->callback([rec, &exit_code] { exit_code = run_record(*rec); });

  auto ver = std::make_shared<VerifyCli>();
  CLI::App* verify = lineage->add_subcommand(
      "verify", "Re-hash every dataset of a manifest and name each file that changed, appeared or vanished, and each "
                "transform script that changed. Exit 0 when all match, 1 when anything changed.");
  verify->add_option("manifest", ver->manifest, "The lineage manifest")->required();
  verify->add_flag("--json", ver->json, "Print the rldk.lineage-verify/v1 JSON instead of text");
  verify->add_option("--threads", ver->threads, "Hashing threads (0: one per core)");
  verify->callback([ver, &exit_code] { exit_code = run_verify(*ver); });

  auto sh = std::make_shared<ShowCli>();
  CLI::App* show = lineage->add_subcommand("show", "Print the lineage graph: text, Mermaid or Graphviz DOT; "
                                                   "--html writes a page with the graph drawn.");
  show->add_option("manifest", sh->manifest, "The lineage manifest")->required();
  show->add_option("--format", sh->format, "text, mermaid or dot")
      ->check(CLI::IsMember({"text", "mermaid", "dot"}));
  show->add_option("--html", sh->html, "Also write an HTML page with the graph as SVG");
  show->callback([sh, &exit_code] { exit_code = run_show(*sh); });
}

}  // namespace rldk::cli
