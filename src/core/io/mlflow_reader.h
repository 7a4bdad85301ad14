// MLflow's two local stores, read-only:
//  - the file store (mlruns/<experiment>/<run>/): one file per metric under metrics/, a line "timestamp_ms value
//    [step]" per logged point; keys with '/' are nested folders (metrics/train/kl is the key train/kl);
//  - the SQL store in a SQLite file (mlflow.db): the metrics table, with NaN stored as is_nan=1 and +-Infinity as
//    +-DBL_MAX (MLflow's own substitution, undone here so the values read back are the values logged).
// A run's id is MLflow's run id (its folder name, runs.run_uuid); its name, params and tags become meta entries
// (mlflow_run_name, params.<key>, tags.<key>). Steps: the logged step; wall time: the timestamp in seconds.
#pragma once

#include <string>

#include "rldk/reader.h"

namespace rldk::io {

// A folder holding meta.yaml and metrics/: one run of a file store.
bool is_mlflow_run_dir(const std::string& path);
// The file starts with SQLite's header ("SQLite format 3\0").
bool is_sqlite_file(const std::string& path);

// Each returns the number of runs it produced; errors: unreadable, unrecognized (nothing to read).
Result<uint32_t> read_mlflow_run_dir(const std::string& path, const ReadOptions& options, PointSink& sink,
                                     Diagnostics& diagnostics);
Result<uint32_t> read_mlflow_sqlite(const std::string& path, const ReadOptions& options, PointSink& sink,
                                    Diagnostics& diagnostics);

}  // namespace rldk::io
