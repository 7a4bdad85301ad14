// The one placeholder expander of rule actions. Values come from logs (run ids, metric names) and rule files, both
// untrusted, so every substituted value is escaped for the context it lands in, never pasted raw:
//   - text:  the value as is (alert messages, sentinel file contents; terminals are the printer's concern);
//   - path:  each value becomes a single safe path component (see sanitize_path_component); confine_path() then
//            checks the whole path stays under a folder rldk was given;
//   - shell: each value is POSIX single-quoted for the quoting state it lands in, so /bin/sh reads it as literal
//            text; a placeholder the expander cannot quote reliably (after `$(`, a backquote, `${`, `$'`, a
//            here-document or a comment) is refused instead of guessed at.
// Placeholders: {name} or {metric}, {value}, {step}, {rule_id}, {run_id}, {time}; numbers take a Python-style
// precision: {value:.3f}, {value:.2e}, {value:.4g}, {value:.0%}. Unknown fields are left as written.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/monitor.h"
#include "rldk/result.h"

namespace rldk {

enum class EscapeContext { text, path, shell };

// The value of placeholder `field` (with the format `spec` after a colon, possibly empty), or nullopt when the
// field is unknown (the placeholder is then left as written).
using PlaceholderLookup = std::function<std::optional<std::string>(std::string_view field, std::string_view spec)>;

// The values of an alert's placeholders.
PlaceholderLookup alert_placeholders(const Alert& alert);

// Expands `templ`. Errors (invalid_argument) only in the shell context, for placeholders it refuses to substitute.
Result<std::string> expand_placeholders(std::string_view templ, const PlaceholderLookup& lookup,
                                        EscapeContext context);
Result<std::string> expand_placeholders(std::string_view templ, const Alert& alert, EscapeContext context);

// A value as one path component: `/`, NUL and control characters become `_`, so do a leading dot and every dot
// of a `..` (no `.`, `..` or hidden names), and an empty value becomes `_`.
std::string sanitize_path_component(std::string_view value);

// `value` as one POSIX single-quoted word: 'it'\''s'.
std::string shell_single_quote(std::string_view value);

// `path` (relative to the working directory) made absolute, if it lies strictly inside one of `roots`, both
// lexically (after normalisation) and physically (the nearest existing folder of `path`, symlinks resolved, is
// inside the root's real path). Error (invalid_argument, context = path) otherwise.
Result<std::filesystem::path> confine_path(const std::filesystem::path& path,
                                           const std::vector<std::filesystem::path>& roots);

}  // namespace rldk
