// Reads one Parquet sample file into a CellSink (Apache Arrow's reader; see parquet_samples.cpp), and Arrow IPC files
// (Hugging Face datasets' save_to_disk shards, data-00000-of-00001.arrow) with the same cell conversion.
#pragma once

#include <string>

#include "samples/cell_sink.h"

namespace arrow {
class Schema;
class RecordBatchReader;
}  // namespace arrow

namespace rldk::samples {

Status read_parquet_samples(const std::string& path, CellSink& sink);
// Arrow IPC, stream format (what datasets writes) or file format ("ARROW1" magic).
Status read_arrow_ipc_samples(const std::string& path, CellSink& sink);
// The cells of every batch of `batches` into `sink`; `format` names the file kind in messages and the schema.
Status read_record_batches(const std::string& path, const arrow::Schema& schema, arrow::RecordBatchReader& batches,
                           const std::string& format, CellSink& sink);

}  // namespace rldk::samples
