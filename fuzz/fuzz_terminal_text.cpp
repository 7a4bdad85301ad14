// The terminal filter (rldk/terminal_text.h) every byte rldk prints goes through, and the Markdown escapes built on
// it. Invariants, for any input cut at any point:
//   - terminal_safe() output is valid UTF-8 with no control character but newline and tab, and no C1 control;
//   - the streaming TerminalFilter, fed the input in two pieces, gives exactly terminal_safe() of the whole;
//   - md_code() and md_text() output is one line, and md_code()'s fence is longer than any backtick run inside.
// A broken invariant traps (__builtin_trap), which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/utf8.h"
#include "report/markdown_text.h"
#include "rldk/terminal_text.h"

namespace {

void check_terminal_safe(std::string_view out) {
  for (size_t i = 0; i < out.size();) {
    size_t len = rldk::utf8_sequence_length(out, i);
    if (len == 0) __builtin_trap();
    auto c = static_cast<unsigned char>(out[i]);
    if (len == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)) __builtin_trap();
    if (len == 2 && c == 0xC2 && static_cast<unsigned char>(out[i + 1]) < 0xA0) __builtin_trap();
    i += len;
  }
}

size_t longest_backtick_run(std::string_view s) {
  size_t run = 0, longest = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string whole = rldk::terminal_safe(input);
  check_terminal_safe(whole);
  size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  rldk::TerminalFilter filter;
  std::string streamed = filter.feed(input.substr(0, cut));
  streamed += filter.feed(input.substr(cut));
  streamed += filter.finish();
  if (streamed != whole) __builtin_trap();

  std::string code = rldk::md_code(input);
  std::string text = rldk::md_text(input);
  if (code.find('\n') != std::string::npos || text.find('\n') != std::string::npos) __builtin_trap();
  size_t fence = code.find_first_not_of('`');
  if (fence == std::string::npos || fence <= longest_backtick_run(code.substr(fence, code.size() - 2 * fence))) {
    __builtin_trap();
  }
  return 0;
}
