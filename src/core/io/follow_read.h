// Pieces shared by the followers: option checks, the budgeted chunked read, and a bounded wait.
#pragma once

#include <cstdint>
#include <vector>

#include "rldk/follow.h"

namespace rldk::io {

Status validate_follow_options(const FollowOptions& options);

// Reads a regular file from an explicit offset (pread, so truncation can move the offset back) in chunks of
// buffer.size() bytes, stopping at end of file or when the call's budget (`budget` bytes of data per read_new call,
// counted in progress.bytes) is used up.
struct BudgetedReader {
  int fd;
  std::vector<char>& buffer;
  size_t budget;

  // True at end of file; false when the budget ran out first (progress.more is then set). Errors: io, with the
  // system's message.
  Result<bool> read_at(uint64_t& offset, const FollowCallback& callback, ReadProgress& progress);
};

// Waits until `fd` is readable or `timeout_ms` passes; with fd < 0 it just sleeps. Interrupted waits return early.
void wait_readable(int fd, int timeout_ms);

}  // namespace rldk::io
