// The console text of a captured output stream that arrives in chunks (a Kaggle log's records, a notebook's
// stream outputs): a chunk may end mid-line and its line goes on in the stream's next chunk. StreamText keeps the
// unfinished line and hands on complete lines, so the console shapes read the text as if captured from a terminal.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace rldk::io::console {

class StreamText {
 public:
  using Sink = std::function<void(std::string_view text, uint64_t line)>;

  // Appends a chunk located at `line` of the file (lines are located at the chunk that ends them) and hands on the
  // lines it completes.
  void append(std::string_view chunk, uint64_t line, const Sink& sink) {
    line_ = line;
    pending_.append(chunk);
    hand_on(sink, false);
  }
  // Hands on what is left of a line that never ended.
  void flush(const Sink& sink) { hand_on(sink, true); }

 private:
  // A tqdm bar redraws with '\r' and ends its line only when the loop ends: pending text is handed on at each '\r'
  // too, and at this size anyway, so memory stays bounded.
  static constexpr size_t MAX_PENDING = size_t{1} << 20;

  void hand_on(const Sink& sink, bool all);

  std::string pending_;  // text after the last line end
  uint64_t line_ = 0;    // the chunk being read
};

}  // namespace rldk::io::console
