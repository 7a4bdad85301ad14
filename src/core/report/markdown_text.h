// Text from a log put into a Markdown report (scan.md, doctor.md, diff.md, ...). A run id or metric name is untrusted:
// raw, `<script>` survives into any renderer that allows HTML, `[x](javascript:...)` becomes a link, a backtick ends
// a code span early and a `|` or newline breaks a table. Every Markdown writer puts data through one of these two.
#pragma once

#include <string>
#include <string_view>

namespace rldk {

// Inline text or a table cell: Markdown and HTML punctuation backslash-escaped, line breaks made spaces, control
// characters and invalid UTF-8 shown as \xNN.
std::string md_text(std::string_view text);

// A code span holding `text` verbatim whatever it contains: fenced with one more backtick than its longest run of
// backticks; `|` escaped so a table cell cannot be split (GFM tables split on it even inside code).
std::string md_code(std::string_view text);

}  // namespace rldk
