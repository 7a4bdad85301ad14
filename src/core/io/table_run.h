// Metric tables in Parquet or Arrow/Feather files as runs: a W&B history export (`run.history().to_parquet(...)`,
// the history parquet files of a run's artifact), a DataFrame of metrics a loop saved with to_parquet or to_feather.
// Each row is a wide record read by the same interpreter as a JSONL or CSV row (step, time and run-id columns, names
// through the dictionary); a null cell is a metric not logged at that row, not a NaN.
#pragma once

#include <string>

#include "rldk/reader.h"

namespace rldk::io {

// The file starts with Parquet's magic ("PAR1") or the Arrow file format's ("ARROW1").
bool is_table_file(const std::string& path);

// Returns the number of runs read; errors: unreadable (not a readable table), unrecognized (no metrics in it).
Result<uint32_t> read_table_run(const std::string& path, const ReadOptions& options, PointSink& sink,
                                Diagnostics& diagnostics);

}  // namespace rldk::io
