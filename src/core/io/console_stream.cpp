#include "io/console_stream.h"

namespace rldk::io::console {

void StreamText::hand_on(const Sink& sink, bool all) {
  std::string_view rest = pending_;
  size_t used = 0;
  for (;;) {
    size_t nl = rest.find('\n', used);
    if (nl == std::string_view::npos) break;
    sink(rest.substr(used, nl - used), line_);
    used = nl + 1;
  }
  // Complete carriage-return pieces of a line still going on (a progress bar).
  size_t cr = rest.rfind('\r');
  if (cr != std::string_view::npos && cr >= used) {
    sink(rest.substr(used, cr - used), line_);
    used = cr + 1;
  }
  // A chunk is one write of the process: a progress bar drawn last ("\r 10%|# | 10/30 [00:10<00:20]") is complete
  // and is handed on now (its counter matters to the dict that comes next, possibly from the other stream).
  bool drawn_bar = used < rest.size() && rest.back() == ']';
  if (all || drawn_bar || rest.size() - used > MAX_PENDING) {
    if (used < rest.size()) sink(rest.substr(used), line_);
    used = rest.size();
  }
  pending_.erase(0, used);
}

}  // namespace rldk::io::console
