// Parquet sample files (TRL's completions_NNNNN.parquet, score tables written by pandas or polars), read with
// Apache Arrow's Parquet reader one record batch at a time: memory holds one batch, whatever the file's size.
#include "samples/parquet_samples.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

#include <cmath>
#include <limits>
#include <vector>

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

namespace {

// A column as the sink sees it: a top-level field, or a leaf of a struct named "parent/child" (verl's prompt pools
// hold reward_model: {ground_truth, style}), as the JSONL reader names nested fields.
struct Leaf {
  std::vector<int> path;  // field index at each level
  std::string name;
  bool numeric = false;
};

void add_leaves(const arrow::Field& field, const std::string& prefix, std::vector<int> path, std::vector<Leaf>& out) {
  std::string name = prefix + field.name();
  if (field.type()->id() == arrow::Type::STRUCT) {
    for (int k = 0; k < field.type()->num_fields(); ++k) {
      std::vector<int> child = path;
      child.push_back(k);
      add_leaves(*field.type()->field(k), name + "/", child, out);
    }
    return;
  }
  out.push_back(Leaf{std::move(path), name, numeric_type(*field.type())});
}

}  // namespace

Status read_record_batches(const std::string& path, const arrow::Schema& schema, arrow::RecordBatchReader& batches,
                           const std::string& format, CellSink& sink) {
  std::vector<Leaf> leaves;
  for (int c = 0; c < schema.num_fields(); ++c) add_leaves(*schema.field(c), "", {c}, leaves);
  std::vector<FileColumn> columns;
  for (const auto& leaf : leaves) columns.push_back({leaf.name, leaf.numeric});
  bool trl = schema.GetFieldIndex("completion") >= 0 && schema.GetFieldIndex("advantage") >= 0;
  Status begun = sink.begin_file(path, columns, step_from_file_name(path), trl ? format + " (TRL completions)" : format);
  if (!begun.ok()) return begun;
  uint64_t row = 0;
  std::string text;
  // Per leaf of the current batch: its array and the struct arrays above it (a null struct hides its fields).
  std::vector<const arrow::Array*> arrays;
  std::vector<std::vector<const arrow::Array*>> parents;
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status next = batches.ReadNext(&batch);
    if (!next.ok()) return Error{ErrorCode::unreadable, "cannot read " + format + ": " + next.message(), path};
    if (!batch) break;
    // Arrow's readers trust the offsets a file stores: a damaged file would make a string's view point anywhere.
    // Checking them is linear in the batch (UTF-8 included) and cheap next to decoding it.
    arrow::Status valid = batch->ValidateFull();
    if (!valid.ok()) {
      return Error{ErrorCode::unreadable, "damaged " + format + " data after row " + std::to_string(row) + ": " +
                                              valid.message(), path};
    }
    arrays.assign(leaves.size(), nullptr);
    parents.assign(leaves.size(), {});
    for (size_t l = 0; l < leaves.size(); ++l) {
      const arrow::Array* a = batch->column(leaves[l].path[0]).get();
      for (size_t d = 1; d < leaves[l].path.size(); ++d) {
        parents[l].push_back(a);
        a = static_cast<const arrow::StructArray&>(*a).field(leaves[l].path[d]).get();  // offset-adjusted child
      }
      arrays[l] = a;
    }
    for (int64_t i = 0; i < batch->num_rows(); ++i, ++row) {
      for (size_t l = 0; l < leaves.size(); ++l) {
        const arrow::Array& array = *arrays[l];
        bool hidden = false;
        for (const arrow::Array* p : parents[l]) hidden |= p->IsNull(i);
        if (hidden) continue;
        int c = static_cast<int>(l);
        if (numeric_type(*array.type())) {
          if (!array.IsNull(i)) sink.set_number(c, number_at(array, i));  // a null is a cell not set, as in JSONL
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

Status read_parquet_samples(const std::string& path, CellSink& sink) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) return arrow_error(path, file.status());
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  if (!reader.ok()) return arrow_error(path, reader.status());
  std::shared_ptr<arrow::Schema> schema;
  arrow::Status got = (*reader)->GetSchema(&schema);
  if (!got.ok()) return arrow_error(path, got);
  auto batches = (*reader)->GetRecordBatchReader();
  if (!batches.ok()) return arrow_error(path, batches.status());
  return read_record_batches(path, *schema, **batches, "parquet", sink);
}

}  // namespace rldk::samples
