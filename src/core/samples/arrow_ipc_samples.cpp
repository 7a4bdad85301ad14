// Arrow IPC sample files: Hugging Face datasets saves a dataset as Arrow IPC streams (data-00000-of-00001.arrow,
// datasets.Dataset.save_to_disk); the Arrow file format (magic "ARROW1", Feather v2) is read too. Arrow's own IPC
// readers, batch by batch, with the cell conversion of the Parquet reader.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>

#include "samples/parquet_samples.h"

namespace rldk::samples {

Status read_arrow_ipc_samples(const std::string& path, CellSink& sink) {
  auto fail = [&](const arrow::Status& s) {
    return Error{ErrorCode::unreadable, "cannot read Arrow IPC: " + s.message(), path};
  };
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) return fail(file.status());
  auto stream = arrow::ipc::RecordBatchStreamReader::Open(*file);
  if (stream.ok()) return read_record_batches(path, *(*stream)->schema(), **stream, "arrow", sink);
  // The file format: a footer indexes the batches.
  auto reopened = arrow::io::ReadableFile::Open(path);
  if (!reopened.ok()) return fail(reopened.status());
  auto random = arrow::ipc::RecordBatchFileReader::Open(*reopened);
  if (!random.ok()) return fail(random.status());
  auto all = (*random)->ToRecordBatches();  // the file format is read whole (it is for small tables, Feather)
  if (!all.ok()) return fail(all.status());
  auto batches = arrow::RecordBatchReader::Make(*all, (*random)->schema());
  if (!batches.ok()) return fail(batches.status());
  return read_record_batches(path, *(*random)->schema(), **batches, "arrow", sink);
}

}  // namespace rldk::samples
