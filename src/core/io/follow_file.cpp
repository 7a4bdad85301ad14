// FileFollower: reads what a trainer appends to one file, through appearance, truncation and replacement.
//
// read_new() does not trust notifications for *what* happened, only for *when* to look: every call checks the open
// file's size (truncation) and what the path names now (replacement, vanishing), so a missed or coalesced inotify
// event can only delay a change, never lose one. Detection limits: a file truncated and rewritten past the old read
// offset between two calls looks like an append (the size alone cannot tell); with inotify the window is a few ms.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/follow_notify.h"
#include "io/follow_read.h"
#include "rldk/follow.h"

namespace rldk {
namespace {

// Changes to the directory's entries that can make the path name another file, or none.
constexpr uint32_t NAME_EVENTS = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
// Writes and truncation of a file.
constexpr uint32_t CONTENT_EVENTS = IN_MODIFY | IN_ATTRIB;

}  // namespace

std::string_view follow_event_name(FollowEventKind kind) {
  switch (kind) {
    case FollowEventKind::data: return "data";
    case FollowEventKind::appeared: return "appeared";
    case FollowEventKind::truncated: return "truncated";
    case FollowEventKind::replaced: return "replaced";
    case FollowEventKind::vanished: return "vanished";
    case FollowEventKind::switched: return "switched";
    case FollowEventKind::ended: return "ended";
  }
  return "unknown";
}

struct FileFollower::Impl {
  std::string path;
  std::string directory;
  FollowOptions options;
  std::vector<char> buffer;

  io::DirectoryNotifier notifier;
  bool inotify = false;
  uint32_t directory_mask = 0;  // what the directory watch asks for now
  bool file_watched = false;    // the open file's inode is watched for writes

  sys::UniqueFd file;
  dev_t device = 0;
  ino_t inode = 0;
  uint64_t offset = 0;
  bool vanished = false;
  bool first_open = true;  // start_at_end applies to this open only

  // The directory reports writes to its entries too until the open file's own inode is watched: before the first
  // read_new() (a caller may poll first), and where /proc/self/fd cannot be watched.
  uint32_t wanted_directory_mask() const { return NAME_EVENTS | (file_watched ? 0 : CONTENT_EVENTS); }

  void ensure_watch() {
    if (!inotify) return;
    uint32_t mask = wanted_directory_mask();
    if (notifier.watching_directory() && mask == directory_mask) return;
    // Adding a watch for a directory already watched replaces its mask.
    auto watch = notifier.watch_directory(directory, mask);
    if (watch == io::DirectoryNotifier::Watch::watching) {
      directory_mask = mask;
    } else if (watch == io::DirectoryNotifier::Watch::unsupported) {
      notifier.close();
      inotify = false;
    }
  }

  void watch_file() {
    file_watched = inotify && notifier.watch_open_file(file.get());
    ensure_watch();
  }

  // Opens the path; false when it does not exist (yet).
  Result<bool> open_file() {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return false;
      return Error{ErrorCode::unreadable, std::string("cannot open: ") + std::strerror(errno), path};
    }
    sys::UniqueFd opened(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      return Error{ErrorCode::unreadable, std::string("cannot stat: ") + std::strerror(errno), path};
    }
    if (S_ISDIR(st.st_mode)) {
      return Error{ErrorCode::unreadable, "is a directory, not a file (follow a directory with DirectoryFollower)",
                   path};
    }
    if (!S_ISREG(st.st_mode)) {
      return Error{ErrorCode::unreadable, "not a regular file (read pipes and devices as a stream, e.g. '-')", path};
    }
    file = std::move(opened);
    device = st.st_dev;
    inode = st.st_ino;
    offset = (first_open && options.start_at_end) ? static_cast<uint64_t>(st.st_size) : 0;
    first_open = false;
    vanished = false;
    watch_file();
    return true;
  }

  void close_file() {
    notifier.unwatch_file();
    file_watched = false;
    file.reset();
    offset = 0;
    ensure_watch();
  }

  // Reads to the end of the open file within the call's budget; false when the budget ran out first.
  Result<bool> read_to_end(const FollowCallback& callback, ReadProgress& progress) {
    io::BudgetedReader reader{file.get(), buffer, options.max_bytes_per_call};
    auto done = reader.read_at(offset, callback, progress);
    if (!done.ok()) return Error{ErrorCode::unreadable, done.error().message, path};
    return done;
  }

  Result<ReadProgress> read_new(const FollowCallback& callback) {
    if (inotify) notifier.drain([](std::string_view, uint32_t) {});
    ensure_watch();
    ReadProgress progress;
    if (!file) {
      auto opened = open_file();
      if (!opened.ok()) return opened.error();
      if (!opened.value()) return progress;
      callback(FollowEvent{FollowEventKind::appeared, {}, path});
    }

    struct stat st {};
    if (::fstat(file.get(), &st) == 0 && static_cast<uint64_t>(st.st_size) < offset) {
      callback(FollowEvent{FollowEventKind::truncated, {}, path});
      offset = 0;
    }
    auto done = read_to_end(callback, progress);
    if (!done.ok()) return done.error();
    if (!done.value()) return progress;

    struct stat now {};
    if (::stat(path.c_str(), &now) != 0) {
      if ((errno == ENOENT || errno == ENOTDIR) && !vanished) {
        vanished = true;
        callback(FollowEvent{FollowEventKind::vanished, {}, path});
      }
      return progress;
    }
    if (now.st_dev == device && now.st_ino == inode) {
      if (vanished) {
        vanished = false;
        callback(FollowEvent{FollowEventKind::appeared, {}, path});
      }
      return progress;
    }

    // Replaced. Bytes may have been appended to the old file since the read above: take them first.
    done = read_to_end(callback, progress);
    if (!done.ok()) return done.error();
    if (!done.value()) return progress;  // the next call finishes the old file, then switches
    callback(FollowEvent{FollowEventKind::replaced, {}, path});
    close_file();
    vanished = false;
    auto opened = open_file();
    if (!opened.ok()) return opened.error();
    if (!opened.value()) return progress;  // gone again; it is reported as appeared when it comes back
    done = read_to_end(callback, progress);
    if (!done.ok()) return done.error();
    return progress;
  }
};

FileFollower::FileFollower(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileFollower::~FileFollower() = default;
FileFollower::FileFollower(FileFollower&&) noexcept = default;
FileFollower& FileFollower::operator=(FileFollower&&) noexcept = default;

Result<FileFollower> FileFollower::open(const std::string& path, const FollowOptions& options) {
  if (path.empty()) return Error{ErrorCode::invalid_argument, "no file to follow (empty path)", ""};
  if (auto valid = io::validate_follow_options(options); !valid.ok()) return valid.error();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->directory = io::parent_directory(path);
  impl->options = options;
  impl->buffer.resize(options.chunk_bytes);
  impl->inotify = options.use_inotify && impl->notifier.create();
  impl->ensure_watch();
  return FileFollower(std::move(impl));
}

int FileFollower::poll_fd() const { return impl_->inotify ? impl_->notifier.fd() : -1; }

int FileFollower::suggested_timeout_ms() const {
  bool watching = impl_->inotify && impl_->notifier.watching_directory();
  return watching ? impl_->options.inotify_check_interval_ms : impl_->options.poll_interval_ms;
}

void FileFollower::wait(int max_ms) const { io::wait_readable(poll_fd(), std::min(max_ms, suggested_timeout_ms())); }

Result<ReadProgress> FileFollower::read_new(const FollowCallback& callback) { return impl_->read_new(callback); }

const std::string& FileFollower::path() const { return impl_->path; }
bool FileFollower::is_open() const { return impl_->file.valid(); }
uint64_t FileFollower::offset() const { return impl_->offset; }

}  // namespace rldk
