// Which files a source path stands for, and what run id a file gets by default.
#pragma once

#include <string>
#include <vector>

#include "rldk/result.h"

namespace rldk::io {

// A file: itself. "-": stdin. A directory: the run logs under it, recursively, sorted; hidden folders skipped;
// JSON documents only as trainer_state.json, and of a trainer's checkpoint-N copies only the newest (or the
// top-level one when it exists), since each holds the same history up to its step.
Result<std::vector<std::string>> list_source_files(const std::string& path);

// The file stem without extensions; for generic names (trainer_state.json, metrics.jsonl, progress.csv, ...)
// the name of the folder that holds it (skipping a checkpoint-N folder).
// TensorBoard event files (the folder is the run), W&B logs run-<id>.wandb (the id is the run): binary run files.
std::string default_run_id(const std::string& path);

bool is_tensorboard_file(const std::string& name);  // events.out.tfevents.*
bool is_wandb_file(const std::string& name);        // run-*.wandb
bool is_binary_run_file(const std::string& name);

}  // namespace rldk::io
