// W&B's GraphQL answer for a history page (io/wandb_server.h): the server's body is untrusted input. Whatever it
// holds, reading it must not crash, hang or read out of bounds, and every line it produces must be an event line
// the JSONL reader takes.
#include <string>
#include <string_view>

#include "io/lenient_json.h"
#include "io/wandb_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static rldk::io::WandbServerRun run = [] {
    rldk::io::WandbServerRun r;
    r.entity = "e";
    r.project = "p";
    r.run = "r";
    r.api_key = "k";
    return r;
  }();
  rldk::io::WandbServerPoller poller(run);
  rldk::io::WandbServerPoller::Page page;
  std::string lines;
  uint64_t values = 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)poller.read_page(text, 0, page, lines, values);
  // Every line it produced parses back.
  size_t count = 0;
  for (size_t begin = 0; begin < lines.size();) {
    size_t end = lines.find('\n', begin);
    if (end == std::string::npos) __builtin_trap();  // lines end with a newline
    rldk::io::FlatRecord record;
    rldk::io::ParseError error;
    if (!rldk::io::parse_flat_object(std::string_view(lines).substr(begin, end - begin), record, error)) {
      __builtin_trap();
    }
    ++count;
    begin = end + 1;
  }
  if (count != values) __builtin_trap();
  return 0;
}
