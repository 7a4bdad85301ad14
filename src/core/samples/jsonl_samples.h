// Reads one JSONL sample file (verl's rollout dumps {step}.jsonl, generic score files; gzip/zstd too) into a
// CellSink, line by line.
#pragma once

#include <string>

#include "samples/cell_sink.h"

namespace rldk::samples {

Status read_jsonl_samples(const std::string& path, CellSink& sink, Diagnostics& diagnostics);

}  // namespace rldk::samples
