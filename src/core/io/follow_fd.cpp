// FdSource: a pipe, terminal or other descriptor read to its end, in the followers' shape.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "rldk/follow.h"

namespace rldk {

FdSource::FdSource(int fd, bool owned, const FdSourceOptions& options)
    : fd_(fd), owned_(owned), options_(options), buffer_(std::max<size_t>(options.chunk_bytes, 1)) {
  if (options_.max_bytes_per_call == 0) options_.max_bytes_per_call = buffer_.size();
}

FdSource FdSource::standard_input(const FdSourceOptions& options) { return FdSource(STDIN_FILENO, false, options); }

FdSource::~FdSource() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

FdSource::FdSource(FdSource&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      owned_(other.owned_),
      ended_(other.ended_),
      options_(other.options_),
      buffer_(std::move(other.buffer_)) {}

FdSource& FdSource::operator=(FdSource&& other) noexcept {
  if (this != &other) {
    if (owned_ && fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    owned_ = other.owned_;
    ended_ = other.ended_;
    options_ = other.options_;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

int FdSource::poll_fd() const { return ended_ ? -1 : fd_; }
bool FdSource::at_end() const { return ended_ || fd_ < 0; }

Result<ReadProgress> FdSource::read_new(const FollowCallback& callback) {
  ReadProgress progress;
  auto finish = [&]() {
    ended_ = true;
    if (owned_ && fd_ >= 0) ::close(fd_);
    if (owned_) fd_ = -1;
    callback(FollowEvent{FollowEventKind::ended, {}, {}});
  };
  while (!at_end()) {
    if (progress.bytes >= options_.max_bytes_per_call) {
      progress.more = true;
      break;
    }
    // A zero-timeout poll before each read keeps the read from blocking without setting O_NONBLOCK, which would
    // be shared with every other holder of the same open file (for a terminal: the user's shell).
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, 0);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    if ((p.revents & POLLNVAL) != 0) {
      ended_ = true;
      return Error{ErrorCode::io, "the input descriptor is not open", ""};
    }
    size_t want = std::min<uint64_t>(buffer_.size(), options_.max_bytes_per_call - progress.bytes);
    ssize_t n = ::read(fd_, buffer_.data(), want);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      int err = errno;
      finish();
      return Error{ErrorCode::io, std::string("read error: ") + std::strerror(err), ""};
    }
    if (n == 0) {
      finish();
      break;
    }
    progress.bytes += static_cast<uint64_t>(n);
    callback(FollowEvent{FollowEventKind::data, std::string_view(buffer_.data(), static_cast<size_t>(n)), {}});
  }
  return progress;
}

}  // namespace rldk
