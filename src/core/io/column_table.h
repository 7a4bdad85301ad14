// JSON objects that keep a run's history by column rather than by record, as training scripts dump them:
//  - a dict of lists, {"step": [10, 20, ...], "loss": [0.5, 0.4, ...]} (json.dump of a defaultdict(list)), also one
//    level down ({"config": {...}, "history": {"loss": [...]}});
//  - pandas' DataFrame.to_json(): {"loss": {"0": 0.5, "1": 0.4}, ...} (orient "columns": the row labels are keys;
//    df.set_index("step") makes them the steps) and orient "split", {"columns": [...], "index": [...],
//    "data": [[...], ...]}.
// Row i of the columns is one wide record, read by the record interpreter as a JSONL record is: a "step" column is
// its step, else the row label, else the row's position. Every number of such a table is in a column: an object
// with numbers of its own is a record (a JSONL line with a per-sample list beside its metrics stays one record).
#pragma once

#include <cstdint>
#include <string_view>

#include "io/records.h"

namespace rldk::io {

// Reads the object in `text` as a column table; false (nothing read) when it is not one. Columns whose length is
// not the table's are reported (`column_length`) and left out.
bool read_column_table(std::string_view text, RecordInterpreter& records, ReadContext& context, uint64_t line);

}  // namespace rldk::io
