// The placeholder expander of rule actions (rldk/placeholders.h). Input: a template, a 0xFF byte, a value (no 0xFF:
// the whole input is the template). The value is substituted for {v} and checked against a harmless value:
//   - shell: the bytes /bin/sh would act on (outside quotes, or `$`, backquote and `\` inside double quotes) are
//     the same whatever the value, so no byte of the value is ever read as shell syntax; a refusal depends on the
//     template only;
//   - path: the value adds no separator and no `..` component, and confine_path() never accepts a path outside
//     its root.
// A broken invariant traps (__builtin_trap), which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rldk/placeholders.h"

namespace {

rldk::PlaceholderLookup value_of(std::string_view v) {
  return [v](std::string_view field, std::string_view) -> std::optional<std::string> {
    if (field == "v") return std::string(v);
    return std::nullopt;
  };
}

// What /bin/sh acts on, as a POSIX lexer sees it: unquoted bytes that are not quoting, and the expansion
// characters inside double quotes. Single-quoted and escaped bytes are literal and left out.
std::string active_bytes(std::string_view s) {
  enum { unquoted, single, doubled } state = unquoted;
  bool escape = false;
  std::string out;
  for (char c : s) {
    switch (state) {
      case single:
        if (c == '\'') state = unquoted;
        break;
      case doubled:
        if (escape) escape = false;
        else if (c == '\\') escape = true;
        else if (c == '"') state = unquoted;
        else if (c == '$' || c == '`') out += c;
        break;
      case unquoted:
        if (escape) escape = false;
        else if (c == '\\') escape = true;
        else if (c == '\'') state = single;
        else if (c == '"') state = doubled;
        else out += c;
        break;
    }
  }
  out += static_cast<char>('0' + static_cast<int>(state));  // the state at the end must not depend on the value
  return out;
}

size_t count_dotdot_components(const std::string& p) {
  size_t n = 0;
  for (const auto& part : std::filesystem::path(p)) n += part == "..";
  return n;
}

size_t count_slashes(const std::string& p) {
  size_t n = 0;
  for (char c : p) n += c == '/';
  return n;
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t split = input.find('\xff');
  std::string_view templ = input.substr(0, split);
  std::string_view value = split == std::string_view::npos ? std::string_view("x'y") : input.substr(split + 1);

  using rldk::EscapeContext;
  auto shell = rldk::expand_placeholders(templ, value_of(value), EscapeContext::shell);
  auto shell_plain = rldk::expand_placeholders(templ, value_of("plain"), EscapeContext::shell);
  check(shell.ok() == shell_plain.ok());
  if (shell.ok()) check(active_bytes(shell.value()) == active_bytes(shell_plain.value()));

  auto path = rldk::expand_placeholders(templ, value_of(value), EscapeContext::path);
  auto path_plain = rldk::expand_placeholders(templ, value_of("plain"), EscapeContext::path);
  check(path.ok() && path_plain.ok());
  check(count_slashes(path.value()) == count_slashes(path_plain.value()));
  check(count_dotdot_components(path.value()) == count_dotdot_components(path_plain.value()));
  std::string component = rldk::sanitize_path_component(value);
  check(!component.empty() && component != "." && component != ".." && component.find('/') == std::string::npos);

  // Confinement, on a root that does not exist (no file system access beyond stat).
  const std::filesystem::path root = "/nonexistent-rldk-fuzz-root/out";
  auto confined = rldk::confine_path(root / path.value(), {root});
  if (confined.ok()) {
    auto rel = confined.value().lexically_relative(root);
    check(!rel.empty() && *rel.begin() != ".." && rel != ".");
  }
  return 0;
}
