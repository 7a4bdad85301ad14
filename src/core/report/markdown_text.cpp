#include "report/markdown_text.h"

#include <algorithm>

#include "rldk/terminal_text.h"

namespace rldk {
namespace {

// The terminal-safe form (controls as \xNN), on one line.
std::string one_line(std::string_view text) {
  std::string out = terminal_safe(text);
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\t', ' ');
  return out;
}

}  // namespace

std::string md_text(std::string_view text) {
  std::string out;
  for (char c : one_line(text)) {
    // CommonMark lets any ASCII punctuation be backslash-escaped; these start HTML, links, code and table cells.
    // (An underscore inside a word is never emphasis, so metric names keep theirs unescaped.)
    if (std::string_view("\\`*[]<>|").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string md_code(std::string_view text) {
  std::string body;
  size_t run = 0, longest = 0;
  for (char c : one_line(text)) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '|') body += '\\';
    body += c;
  }
  std::string fence(longest + 1, '`');
  // A span that starts or ends with a backtick needs a space inside the fence (stripped again by the renderer).
  bool pad = body.empty() || body.front() == '`' || body.back() == '`';
  std::string space = pad ? " " : "";
  return fence + space + body + space + fence;
}

}  // namespace rldk
