#include "rldk/terminal_text.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/utf8.h"
#include "sys/write_all.h"

namespace rldk {
namespace {

// Appends `prefix` and the byte as two hex digits: \x1b for a raw byte, \u009b for a C1 control character.
void append_escape(std::string& out, const char* prefix, unsigned char c) {
  static const char* hex = "0123456789abcdef";
  out += prefix;
  out += hex[c >> 4];
  out += hex[c & 15];
}

void escape_into(std::string& out, std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t len = utf8_sequence_length(text, i);
    if (len == 1) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
        append_escape(out, "\\x", c);
      } else {
        out += static_cast<char>(c);
      }
    } else if (len == 0) {
      append_escape(out, "\\x", c);
      len = 1;
    } else if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      // C1 controls: CSI (U+009B) and OSC (U+009D) act like ESC [ and ESC ] on terminals that honour them.
      append_escape(out, "\\u00", static_cast<unsigned char>(text[i + 1]));
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
}

// stdio streams over the original descriptors, kept for output rldk passes through on purpose.
std::FILE* g_raw_out = stdout;
std::FILE* g_raw_err = stderr;

struct GuardCookie {
  int fd;
  TerminalFilter filter;
};

ssize_t guard_write(void* cookie, const char* data, size_t size) {
  auto* c = static_cast<GuardCookie*>(cookie);
  if (sys::write_all(c->fd, c->filter.feed(std::string_view(data, size))) != 0) return -1;
  return static_cast<ssize_t>(size);
}

int guard_close(void* cookie) {
  auto* c = static_cast<GuardCookie*>(cookie);
  return sys::write_all(c->fd, c->filter.finish()) == 0 ? 0 : -1;
}

// The two cookies live as long as the process: exit() flushes the streams after static destructors have run, so
// they must never be destroyed, and holding them here (not only inside glibc's FILE) keeps leak checkers quiet.
GuardCookie* g_out_cookie = nullptr;
GuardCookie* g_err_cookie = nullptr;

std::FILE* guarded_stream(std::FILE* original, int mode, GuardCookie*& cookie) {
  std::fflush(original);
  cookie = new GuardCookie{::fileno(original), {}};
  cookie_io_functions_t io{};
  io.write = guard_write;
  io.close = guard_close;
  std::FILE* stream = ::fopencookie(cookie, "w", io);
  if (stream == nullptr) return original;  // out of memory at start-up: unfiltered beats silent
  std::setvbuf(stream, nullptr, mode, mode == _IONBF ? 0 : BUFSIZ);
  return stream;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  escape_into(out, text);
  return out;
}

std::string TerminalFilter::feed(std::string_view piece) {
  std::string text = std::move(carry_);
  text.append(piece);
  std::string out;
  out.reserve(text.size());
  size_t tail = utf8_unfinished_tail(text);
  escape_into(out, std::string_view(text).substr(0, tail));
  carry_.assign(text, tail, std::string::npos);
  return out;
}

std::string TerminalFilter::finish() {
  std::string out;
  escape_into(out, carry_);
  carry_.clear();
  return out;
}

void install_terminal_guard() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  g_raw_out = stdout;
  g_raw_err = stderr;
  // Terminals get line buffering as before; pipes and files stay fully buffered; stderr stays unbuffered.
  stdout = guarded_stream(g_raw_out, ::isatty(::fileno(g_raw_out)) ? _IOLBF : _IOFBF, g_out_cookie);
  stderr = guarded_stream(g_raw_err, _IONBF, g_err_cookie);
}

std::FILE* raw_stdout() {
  std::fflush(stdout);  // keeps filtered and raw output in the order it was written
  return g_raw_out;
}

std::FILE* raw_stderr() {
  std::fflush(stderr);
  return g_raw_err;
}

}  // namespace rldk
