#include "rldk/placeholders.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rldk {
namespace fs = std::filesystem;
namespace {

// Python-style precision for numbers, as alert messages have always used it ({value:.3f}, {value:.0%}).
std::string format_number(double v, std::string_view spec) {
  int precision = 6;
  char conv = 'g';
  bool percent = false;
  if (!spec.empty() && spec[0] == '.') {
    precision = std::atoi(std::string(spec.substr(1)).c_str());
    char last = spec.back();
    if (last == 'f' || last == 'e' || last == 'g') conv = last;
    if (last == '%') {  // a fraction printed as a percentage
      conv = 'f';
      percent = true;
      v *= 100.0;
    }
  }
  precision = std::clamp(precision, 0, 17);
  char format[8] = {'%', '.', '*', conv, '\0'};
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, precision, v);
  return std::string(buffer) + (percent ? "%" : "");
}

// Tracks /bin/sh's quoting state over the template text the expander copies, so a value is quoted for the state
// it lands in. It follows only what it can follow exactly (quotes, backslashes, word starts); after a construct
// whose end or nesting it would have to guess (command substitution, `${...}` with words, `$'...'` whose escapes
// differ between dash and bash, here-documents, comments), it refuses further placeholders rather than risk
// quoting for the wrong state.
class ShellQuoting {
 public:
  enum class State { unquoted, single, doubled };

  // Feeds the template character at `i` (the one after it is looked at, not consumed).
  void feed(std::string_view t, size_t i) {
    char c = t[i];
    char next = i + 1 < t.size() ? t[i + 1] : '\0';
    shell_brace_ = false;
    switch (state_) {
      case State::single:
        if (c == '\'') state_ = State::unquoted;
        return;
      case State::doubled:
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          state_ = State::unquoted;
        } else if (c == '`') {
          taint("a backquote");
        } else if (c == '$') {
          dollar(t, i, next);
        }
        return;
      case State::unquoted: break;
    }
    bool was_word_start = word_start_;
    word_start_ = false;
    if (escape_) {
      escape_ = false;
      return;
    }
    switch (c) {
      case '\\': escape_ = true; break;
      case '\'': state_ = State::single; break;
      case '"': state_ = State::doubled; break;
      case '`': taint("a backquote"); break;
      case '$': dollar(t, i, next); break;
      case '<':
        if (next == '<') taint("a here-document");
        word_start_ = true;
        break;
      case '#':
        if (was_word_start) taint("a comment");
        break;
      case ' ': case '\t': case '\n': case ';': case '&': case '|': case '(': case ')': case '>':
        word_start_ = true;
        break;
      default: break;
    }
  }

  // Whether a `{` at this point may start a placeholder: not when a backslash escapes it, nor the brace of `${`.
  bool placeholder_allowed() const { return state_ == State::single || (!escape_ && !shell_brace_); }
  const std::string& refusal() const { return refusal_; }

  // `value` quoted for the current state; the state after it is the state before it.
  std::string quote(std::string_view value) {
    std::string clean(value);
    std::replace(clean.begin(), clean.end(), '\0', '_');  // argv strings end at a NUL: it would cut the quoting
    word_start_ = false;
    switch (state_) {
      case State::unquoted: return shell_single_quote(clean);
      case State::doubled: return "\"" + shell_single_quote(clean) + "\"";  // leave "...", quote, re-enter
      case State::single: {
        std::string q = shell_single_quote(clean);  // inside '...': drop our own outer quotes
        return q.substr(1, q.size() - 2);
      }
    }
    return shell_single_quote(clean);
  }

 private:
  void dollar(std::string_view t, size_t i, char next) {
    if (next == '(') taint("a command substitution $(...)");
    if (next == '\'') taint("$'...'");
    if (next != '{') return;
    // The brace of `${` is the shell's, never a placeholder. Plain `${NAME}` is harmless; `${x:-word}` has words
    // whose quoting differs between shells.
    shell_brace_ = true;
    size_t j = i + 2;
    while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
    if (!(j < t.size() && t[j] == '}' && j > i + 2)) taint("${...}");
  }
  void taint(const char* what) {
    if (refusal_.empty()) refusal_ = what;
  }

  State state_ = State::unquoted;
  bool escape_ = false;
  bool word_start_ = true;
  bool shell_brace_ = false;  // the last character was the `$` of `${`
  std::string refusal_;  // non-empty: placeholders from here on are refused, and why
};

}  // namespace

PlaceholderLookup alert_placeholders(const Alert& alert) {
  return [&alert](std::string_view field, std::string_view spec) -> std::optional<std::string> {
    if (field == "name" || field == "metric") return alert.metric;
    if (field == "value") return format_number(alert.value, spec);
    if (field == "step") return std::to_string(alert.step);
    if (field == "rule_id") return alert.rule_id;
    if (field == "run_id") return alert.run_id;
    if (field == "time") return format_number(alert.time, spec);
    return std::nullopt;
  };
}

Result<std::string> expand_placeholders(std::string_view templ, const PlaceholderLookup& lookup,
                                        EscapeContext context) {
  std::string out;
  ShellQuoting shell;
  bool track = context == EscapeContext::shell;
  // Template text is copied as written, through the quoting tracker in the shell context.
  auto copy = [&](size_t from, size_t to) {
    if (!track) {
      out.append(templ.substr(from, to - from));
      return;
    }
    for (; from < to; ++from) {
      shell.feed(templ, from);
      out += templ[from];
    }
  };
  size_t i = 0;
  while (i < templ.size()) {
    size_t open = templ.find('{', i);
    if (open == std::string_view::npos) {
      copy(i, templ.size());
      break;
    }
    copy(i, open);
    if (track && !shell.placeholder_allowed()) {
      copy(open, open + 1);  // `\{` or the brace of `${`: shell syntax, not a placeholder
      i = open + 1;
      continue;
    }
    size_t close = templ.find('}', open);
    if (close == std::string_view::npos) {
      copy(open, templ.size());
      break;
    }
    std::string_view field = templ.substr(open + 1, close - open - 1);
    std::string_view spec;
    if (auto colon = field.find(':'); colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    std::optional<std::string> value = lookup(field, spec);
    if (!value) {
      copy(open, close + 1);  // unknown: left as written
      i = close + 1;
      continue;
    }
    switch (context) {
      case EscapeContext::text: out += *value; break;
      case EscapeContext::path: out += sanitize_path_component(*value); break;
      case EscapeContext::shell:
        if (!shell.refusal().empty()) {
          return Error{ErrorCode::invalid_argument,
                       "placeholder {" + std::string(field) + "} comes after " + shell.refusal() +
                           ", where its value cannot be quoted reliably; use \"$RLDK_RUN_ID\", \"$RLDK_RULE_ID\", "
                           "\"$RLDK_METRIC\", \"$RLDK_STEP\" or \"$RLDK_MESSAGE\" there",
                       std::string(templ)};
        }
        out += shell.quote(*value);
        break;
    }
    i = close + 1;
  }
  return out;
}

Result<std::string> expand_placeholders(std::string_view templ, const Alert& alert, EscapeContext context) {
  return expand_placeholders(templ, alert_placeholders(alert), context);
}

std::string sanitize_path_component(std::string_view value) {
  if (value.empty()) return "_";
  std::string out(value);
  for (size_t i = 0; i < out.size(); ++i) {
    auto c = static_cast<unsigned char>(out[i]);
    if (c == '/' || c < 0x20 || c == 0x7f) out[i] = '_';
  }
  // Dots: a leading one (".", "..", hidden names, and "." + a template's own "." making "..") and every dot of a
  // run of two or more.
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '.') continue;
    bool run = (i > 0 && value[i - 1] == '.') || (i + 1 < value.size() && value[i + 1] == '.');
    if (i == 0 || run) out[i] = '_';
  }
  return out;
}

std::string shell_single_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += "'";
  return out;
}

namespace {

// Whether `path` lies strictly inside `root` (both absolute and normalised).
bool strictly_inside(const fs::path& path, const fs::path& root) {
  fs::path rel = path.lexically_relative(root);
  if (rel.empty() || rel == ".") return false;
  return *rel.begin() != "..";
}

bool inside_or_at(const fs::path& path, const fs::path& root) { return path == root || strictly_inside(path, root); }

fs::path normal_absolute(const fs::path& p) {
  std::error_code ec;
  fs::path n = fs::absolute(p, ec).lexically_normal();
  if (!n.has_filename() && n != n.root_path()) n = n.parent_path();  // "a/b/" -> "a/b"
  return n;
}

}  // namespace

Result<fs::path> confine_path(const fs::path& path, const std::vector<fs::path>& roots) {
  fs::path target = normal_absolute(path);
  std::string tried;
  for (const auto& r : roots) {
    fs::path root = normal_absolute(r);
    tried += (tried.empty() ? "" : ", ") + root.string();
    if (!strictly_inside(target, root)) continue;
    // Physically too: a symlinked folder on the way must not lead out of the root.
    std::error_code ec;
    fs::path real_root = fs::weakly_canonical(root, ec);
    if (ec) continue;
    fs::path real_parent = fs::weakly_canonical(target.parent_path(), ec);
    if (ec) continue;
    if (inside_or_at(real_parent, real_root)) return target;
  }
  return Error{ErrorCode::invalid_argument,
               "resolves outside every folder rldk may write to (" + (tried.empty() ? std::string("none") : tried) +
                   ")",
               path.string()};
}

}  // namespace rldk
