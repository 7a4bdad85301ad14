// Writes all of `text` to a descriptor: write(2) may take less than asked (pipes, signals), so every writer loops;
// this is the one loop. Returns 0, or the errno of the failure (ENOSPC, EPIPE, ...).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace rldk::sys {

inline int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace rldk::sys
