// Kaggle keeps a notebook's output as one JSON array with one record per line of the file:
//   [{"stream_name":"stderr","time":7.38,"data":"0.00s - Debugger warning: ...\n"}
//   ,{"stream_name":"stdout","time":655.4,"data":"\r  3%|█▎ | 10/300 [07:58\u003c3:37:31]\r{'loss': ...}\n"}
// The console text is the data strings of each stream, in order (StreamText joins lines split across records).
// KaggleLog unwraps the records and hands the console text on line by line, so the console shapes read it as if it
// had been captured from a terminal.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>

#include "io/console_stream.h"
#include "io/records.h"

namespace rldk::io::console {

class KaggleLog {
 public:
  using Sink = StreamText::Sink;
  KaggleLog(ReadContext& context, Sink sink) : context_(context), sink_(std::move(sink)) {}

  // True when `text` belongs to such a log (the first line decides); its console text has gone to the sink.
  bool line(std::string_view text, uint64_t number);
  // Hands on what is left of lines that never ended.
  void finish();
  bool active() const { return active_; }

 private:
  ReadContext& context_;
  Sink sink_;
  FlatRecord record_;
  std::array<StreamText, 2> streams_;  // stdout (and any other name), stderr
  bool active_ = false;
  bool decided_ = false;
};

}  // namespace rldk::io::console
