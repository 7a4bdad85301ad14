// Reads one Parquet sample file into a CellSink (Apache Arrow's reader; see parquet_samples.cpp).
#pragma once

#include <string>

#include "samples/cell_sink.h"

namespace rldk::samples {

Status read_parquet_samples(const std::string& path, CellSink& sink);

}  // namespace rldk::samples
