#include "io/console_kaggle.h"

#include "io/console_text.h"

namespace rldk::io::console {

bool KaggleLog::line(std::string_view text, uint64_t number) {
  std::string_view t = trim(text);
  if (!decided_) {
    if (t.empty()) return false;
    decided_ = true;
    active_ = starts_with(t, "[{\"stream_name\"");
  }
  if (!active_) return false;
  if (!t.empty() && (t.front() == '[' || t.front() == ',')) t.remove_prefix(1);
  if (!t.empty() && t.back() == ']') t.remove_suffix(1);  // the last record closes the array
  t = trim(t);
  if (t.empty()) return true;
  ParseError error;
  if (!parse_flat_object(t, record_, error)) {
    context_.diagnose("malformed_record", number,
                      "kaggle log record is malformed at column " + std::to_string(error.offset + 1) + ": " +
                          error.message);
    return true;
  }
  std::string_view stream_name, data;
  bool has_data = false;
  for (const auto& f : record_.fields) {
    if (f.depth != 0 || f.kind != ValueKind::string) continue;
    std::string_view key = record_.key(f);
    if (key == "stream_name") stream_name = record_.str(f);
    if (key == "data") {
      data = record_.str(f);
      has_data = true;
    }
  }
  if (!has_data) return true;
  // Lines are located at the record that ends them.
  streams_[stream_name == "stderr" ? 1 : 0].append(data, number, sink_);
  return true;
}

void KaggleLog::finish() {
  for (auto& stream : streams_) stream.flush(sink_);
}

}  // namespace rldk::io::console
