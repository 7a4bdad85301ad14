// rldk reference run [--quick | --full] [--out DIR] [--model PATH]: the reference suite. Real TRL trainers (GRPO,
// DPO) on a tiny policy with known bugs, each caught by the rldk capability named for it. The trainers are Python,
// so the suite is the rldk package's module rldk.reference (catalog, tasks, checks); this command runs it with
// the interpreter rldk was installed with, and every check it applies calls this rldk binary.
#include "commands.h"
#include "python_entry.h"

namespace rldk::cli {

void add_reference_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "reference", "The reference suite: real TRL trainers on a tiny model with known bugs (learning rate 100x, an "
                   "unseeded shuffle, a saturating or length-paying reward model, eval items in the training data, a "
                   "memory leak), each caught by the rldk capability named for it, healthy runs quiet; prints the "
                   "table of catches and writes every card with an index.html");
  cmd->require_subcommand(1);
  CLI::App* run = cmd->add_subcommand(
      "run", "Train the suite's runs and apply every check (--quick: about two minutes on 2 CPU cores, the default; "
             "--full; --out DIR, default runs/reference; --model PATH: a local Hugging Face model instead of the "
             "tiny one). Exit 0 when every bug is caught and every healthy run stays quiet, 1 otherwise");
  run->allow_extras();
  run->prefix_command();  // every word after `run` is the suite's own option (python -m rldk.reference run --help)
  // --help too: the suite's own help lists its options (--quick, --full, --out, --model, --jobs, --only, --docs),
  // which are defined once, in the Python module.
  run->set_help_flag();
  run->callback([run, &exit_code] {
    std::vector<std::string> args{"run"};
    for (const auto& a : run->remaining()) args.push_back(a);
    exit_code = exec_python_module("rldk reference", "rldk.reference", args,
                                   "Python with rldk, torch, transformers and trl installed");
  });
}

}  // namespace rldk::cli
