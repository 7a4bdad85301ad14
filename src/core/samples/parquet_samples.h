// Reads one Parquet sample file into the assembler (Apache Arrow's reader; see parquet_samples.cpp).
#pragma once

#include <string>

#include "samples/sample_assembler.h"

namespace rldk::samples {

Status read_parquet_samples(const std::string& path, SampleAssembler& assembler);

}  // namespace rldk::samples
