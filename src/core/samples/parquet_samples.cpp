// Parquet sample files (TRL's completions_NNNNN.parquet, score tables written by pandas or polars), read with
// Apache Arrow's Parquet reader one record batch at a time: memory holds one batch, whatever the file's size.
#include "samples/parquet_samples.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <cmath>
#include <limits>

namespace rldk::samples {
namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

bool numeric_type(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || arrow::is_floating(type.id()) || type.id() == arrow::Type::BOOL;
}

double number_at(const arrow::Array& array, int64_t i) {
  if (array.IsNull(i)) return NaN;
  switch (array.type_id()) {
    case arrow::Type::DOUBLE: return static_cast<const arrow::DoubleArray&>(array).Value(i);
    case arrow::Type::FLOAT: return static_cast<const arrow::FloatArray&>(array).Value(i);
    case arrow::Type::INT64: return static_cast<double>(static_cast<const arrow::Int64Array&>(array).Value(i));
    case arrow::Type::INT32: return static_cast<const arrow::Int32Array&>(array).Value(i);
    case arrow::Type::INT16: return static_cast<const arrow::Int16Array&>(array).Value(i);
    case arrow::Type::INT8: return static_cast<const arrow::Int8Array&>(array).Value(i);
    case arrow::Type::UINT64: return static_cast<double>(static_cast<const arrow::UInt64Array&>(array).Value(i));
    case arrow::Type::UINT32: return static_cast<const arrow::UInt32Array&>(array).Value(i);
    case arrow::Type::UINT16: return static_cast<const arrow::UInt16Array&>(array).Value(i);
    case arrow::Type::UINT8: return static_cast<const arrow::UInt8Array&>(array).Value(i);
    case arrow::Type::BOOL: return static_cast<const arrow::BooleanArray&>(array).Value(i) ? 1.0 : 0.0;
    default: return NaN;
  }
}

// Text of a cell: a string, or a chat (a list of {role, content} messages, as TRL writes conversational prompts
// and completions) as its contents joined by newlines. False for other types.
bool text_at(const arrow::Array& array, int64_t i, std::string& out) {
  out.clear();
  if (array.IsNull(i)) return true;
  switch (array.type_id()) {
    case arrow::Type::STRING: out = static_cast<const arrow::StringArray&>(array).GetView(i); return true;
    case arrow::Type::LARGE_STRING: out = static_cast<const arrow::LargeStringArray&>(array).GetView(i); return true;
    case arrow::Type::STRING_VIEW: out = static_cast<const arrow::StringViewArray&>(array).GetView(i); return true;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      std::shared_ptr<arrow::Array> items = array.type_id() == arrow::Type::LIST
                                                ? static_cast<const arrow::ListArray&>(array).value_slice(i)
                                                : static_cast<const arrow::LargeListArray&>(array).value_slice(i);
      std::string part;
      for (int64_t k = 0; k < items->length(); ++k) {
        if (items->type_id() == arrow::Type::STRUCT) {
          auto content = static_cast<const arrow::StructArray&>(*items).GetFieldByName("content");
          if (!content || !text_at(*content, k, part)) continue;
        } else if (!text_at(*items, k, part)) {
          continue;
        }
        if (!out.empty()) out += '\n';
        out += part;
      }
      return true;
    }
    default: return false;
  }
}

Error arrow_error(const std::string& path, const arrow::Status& status) {
  return Error{ErrorCode::unreadable, "cannot read Parquet: " + status.message(), path};
}

}  // namespace

Status read_parquet_samples(const std::string& path, CellSink& sink) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) return arrow_error(path, file.status());
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  if (!reader.ok()) return arrow_error(path, reader.status());
  std::shared_ptr<arrow::Schema> schema;
  arrow::Status got = (*reader)->GetSchema(&schema);
  if (!got.ok()) return arrow_error(path, got);
  std::vector<FileColumn> columns;
  for (const auto& field : schema->fields()) columns.push_back({field->name(), numeric_type(*field->type())});
  bool trl = schema->GetFieldIndex("completion") >= 0 && schema->GetFieldIndex("advantage") >= 0;
  Status begun = sink.begin_file(path, columns, step_from_file_name(path),
                                      trl ? "parquet (TRL completions)" : "parquet");
  if (!begun.ok()) return begun;
  auto batches = (*reader)->GetRecordBatchReader();
  if (!batches.ok()) return arrow_error(path, batches.status());
  uint64_t row = 0;
  std::string text;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status next = (*batches)->ReadNext(&batch);
    if (!next.ok()) return arrow_error(path, next);
    if (!batch) break;
    for (int64_t i = 0; i < batch->num_rows(); ++i, ++row) {
      for (int c = 0; c < batch->num_columns(); ++c) {
        const arrow::Array& array = *batch->column(c);
        if (numeric_type(*array.type())) {
          sink.set_number(c, number_at(array, i));
        } else if (array.type_id() == arrow::Type::STRING && !array.IsNull(i)) {
          sink.set_text(c, static_cast<const arrow::StringArray&>(array).GetView(i));  // no copy on the hot path
        } else if (text_at(array, i, text)) {
          sink.set_text(c, text);
        }
      }
      sink.end_row(row);
    }
  }
  return Ok{};
}

}  // namespace rldk::samples
