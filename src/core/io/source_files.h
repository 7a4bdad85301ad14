// Which files a source path stands for, and what run id a file gets by default.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/result.h"

namespace rldk::io {

// A file: itself. "-": stdin. A directory: the run logs under it, recursively, sorted; hidden folders skipped;
// JSON documents only as trainer_state.json and dumps named like a log, and of a trainer's checkpoint-N copies only
// the newest (or the top-level one when it exists), since each holds the same history up to its step. A folder
// with several TensorBoard event files is one entry, the folder: one run (see tensorboard_log_files).
Result<std::vector<std::string>> list_source_files(const std::string& path);

// The event files of the TensorBoard log dir `dir` when there are two or more: its own, oldest first (their names
// start with the writer's creation time), then those of its add_scalars subfolders. A log dir is one run: a run
// resumed into it (a trainer's resume_from_checkpoint) writes a second file there, and add_scalars writes each key's
// values into a subfolder <tag>_<key>. Empty for anything else.
std::vector<std::string> tensorboard_log_files(const std::string& dir);

// For an add_scalars subfolder: the key its name gives the tag ("reward_mean" for the tag "reward": "mean"; "/" in
// the tag is "_" in the folder's name), or nothing when the name is not the tag's.
std::optional<std::string> add_scalars_key(std::string_view tag, std::string_view folder);

// A W&B run log (run-<id>.wandb in its run folder run-YYYYMMDD_HHMMSS-<id>) and the logs of the same run resumed
// later, in the run folders beside it with the same id and a later time, oldest first: W&B shows them as one run.
// Empty when there is no later one.
std::vector<std::string> wandb_run_files(const std::string& file);

// The file stem without extensions; for generic names (trainer_state.json, metrics.jsonl, progress.csv, ...)
// the name of the folder that holds it (skipping a checkpoint-N folder).
// TensorBoard event files (the folder is the run), W&B logs run-<id>.wandb (the id is the run): binary run files.
std::string default_run_id(const std::string& path);

// The tag a TensorBoard scalar download holds (Wall time, Step, Value rows; one tag per file), from its file name,
// run-<run>-tag-<tag>.csv or .json, where the tag's '/' were written '_': the HF Trainer's train/ and eval/ are put
// back. A file renamed by hand is named by its stem.
std::string tensorboard_export_tag(const std::string& path);

// A folder's TensorBoard downloads of one run's tags are one run: listed as one entry, <folder>/run-<run>-tag-*.csv
// (or .json), which this expands to the files, in name order. Empty for any other path.
std::vector<std::string> tensorboard_download_files(const std::string& entry);

bool is_tensorboard_file(const std::string& name);  // events.out.tfevents.*
bool is_wandb_file(const std::string& name);        // run-*.wandb
bool is_binary_run_file(const std::string& name);

}  // namespace rldk::io
