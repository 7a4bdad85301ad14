// One parser per format. Each receives complete lines (without the newline) in order and emits through the shared
// RecordInterpreter; documents (trainer_state.json) collect their lines and parse them at finish().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "io/records.h"
#include "rldk/reader.h"

namespace rldk::io {

class LineFormat {
 public:
  virtual ~LineFormat() = default;
  virtual void line(std::string_view text, uint64_t number) = 0;
  virtual void finish() {}
  // The input moves on to the next file of a run read as one (TensorBoard downloads of its tags): a format whose
  // state belongs to one file (a CSV header, a JSON document) starts afresh.
  virtual void end_file() {}
  // What was recognised, for `rldk info` (e.g. "jsonl (long-form events)").
  virtual std::string detail() const = 0;
};

std::unique_ptr<LineFormat> make_jsonl_format(ReadContext& context);
std::unique_ptr<LineFormat> make_document_format(ReadContext& context);
std::unique_ptr<LineFormat> make_csv_format(ReadContext& context, char delimiter);
std::unique_ptr<LineFormat> make_console_format(ReadContext& context);

// Decides the format from the first non-empty line and the file name (only .csv/.tsv names are trusted, because
// content alone cannot tell a one-column CSV from text).
Format sniff_format(std::string_view first_line, std::string_view path);

}  // namespace rldk::io
