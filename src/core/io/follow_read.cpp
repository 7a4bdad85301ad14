#include "io/follow_read.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace rldk::io {

Status validate_follow_options(const FollowOptions& options) {
  if (options.chunk_bytes == 0) return Error{ErrorCode::invalid_argument, "chunk_bytes must be positive", ""};
  if (options.max_bytes_per_call == 0) {
    return Error{ErrorCode::invalid_argument, "max_bytes_per_call must be positive", ""};
  }
  if (options.poll_interval_ms <= 0 || options.inotify_check_interval_ms <= 0) {
    return Error{ErrorCode::invalid_argument, "poll intervals must be positive (milliseconds)", ""};
  }
  return Ok{};
}

Result<bool> BudgetedReader::read_at(uint64_t& offset, const FollowCallback& callback, ReadProgress& progress) {
  for (;;) {
    if (progress.bytes >= budget) {
      progress.more = true;
      return false;
    }
    size_t want = std::min<uint64_t>(buffer.size(), budget - progress.bytes);
    ssize_t n = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{ErrorCode::io, std::string("read error: ") + std::strerror(errno), ""};
    }
    if (n == 0) return true;
    offset += static_cast<uint64_t>(n);
    progress.bytes += static_cast<uint64_t>(n);
    callback(FollowEvent{FollowEventKind::data, std::string_view(buffer.data(), static_cast<size_t>(n)), {}});
  }
}

void wait_readable(int fd, int timeout_ms) {
  timeout_ms = std::max(timeout_ms, 0);
  if (fd < 0) {
    ::poll(nullptr, 0, timeout_ms);
    return;
  }
  pollfd p{fd, POLLIN, 0};
  ::poll(&p, 1, timeout_ms);
}

}  // namespace rldk::io
