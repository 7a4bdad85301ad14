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
  Stream& stream = streams_[stream_name == "stderr" ? 1 : 0];
  stream.line = number;  // lines are located at the record that ends them
  stream.pending.append(data);
  hand_on(stream, false);
  return true;
}

void KaggleLog::hand_on(Stream& stream, bool all) {
  std::string_view rest = stream.pending;
  size_t used = 0;
  for (;;) {
    size_t nl = rest.find('\n', used);
    if (nl == std::string_view::npos) break;
    sink_(rest.substr(used, nl - used), stream.line);
    used = nl + 1;
  }
  // Complete carriage-return pieces of a line still going on (a progress bar).
  size_t cr = rest.rfind('\r');
  if (cr != std::string_view::npos && cr >= used) {
    sink_(rest.substr(used, cr - used), stream.line);
    used = cr + 1;
  }
  // A record is one write of the process: a progress bar drawn last ("\r 10%|# | 10/30 [00:10<00:20]") is complete
  // and is handed on now (its counter matters to the dict that comes next, possibly from the other stream).
  bool drawn_bar = used < rest.size() && rest.back() == ']';
  if (all || drawn_bar || rest.size() - used > MAX_PENDING) {
    if (used < rest.size()) sink_(rest.substr(used), stream.line);
    used = rest.size();
  }
  stream.pending.erase(0, used);
}

void KaggleLog::finish() {
  for (auto& stream : streams_) hand_on(stream, true);
}

}  // namespace rldk::io::console
