// W&B tables as sample files: the files/media/table/**/*.table.json of a W&B run folder (offline-run-*/ or
// wandb/run-*/), as TRL's W&B logging of completions writes them ({"columns": [...], "data": [[...], ...]}).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "samples/cell_sink.h"

namespace rldk::samples {

Status read_wandb_table_samples(const std::string& path, CellSink& sink, Diagnostics& diagnostics);

// True for W&B's name of a logged table file: <key>_<step>_<hash>.table.json.
bool is_wandb_table_name(std::string_view path);

// The <step> of <key>_<step>_<hash>.table.json. W&B names the file after its own history step (_step: one per
// wandb.log call, or the step= given to an earlier call), which is not the trainer's step: TRL's tables carry a
// step column, which wins. The number orders a run's tables and is the step of rows that have no step column.
std::optional<int64_t> wandb_table_step(std::string_view path);

// The table files of the W&B run reachable from `dir`: `dir` itself being a run folder (or its files/), or the
// runs under dir/wandb/ or under dir (dir being a wandb/ folder). With several runs the latest is taken (wandb's
// latest-run link, else the newest name) and the others are named in a diagnostic. Tables logged under the key
// "completions" (TRL's) are preferred over other tables when both exist. Empty when there are none.
std::vector<std::string> wandb_table_files(const std::filesystem::path& dir, Diagnostics& diagnostics);

}  // namespace rldk::samples
