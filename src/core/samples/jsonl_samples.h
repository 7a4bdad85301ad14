// Reads one JSONL sample file (verl's rollout dumps {step}.jsonl, generic score files; gzip/zstd too) into the
// assembler, line by line.
#pragma once

#include <string>

#include "samples/sample_assembler.h"

namespace rldk::samples {

Status read_jsonl_samples(const std::string& path, SampleAssembler& assembler, Diagnostics& diagnostics);

}  // namespace rldk::samples
