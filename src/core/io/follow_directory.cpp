// DirectoryFollower: follows the newest run file in a directory, switching when a newer one appears.
//
// One inotify watch on the directory covers both jobs: entry changes (a new file) and writes to the current file
// (IN_MODIFY of a child). The current file itself is read by a FileFollower in polling mode, whose checks are driven
// by this class's wake-ups. Listing the directory costs a stat per entry, so it runs when entries change, and only
// at a bounded rate when other files are merely written to.
#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

#include "io/follow_notify.h"
#include "io/follow_read.h"
#include "io/source_files.h"
#include "rldk/follow.h"

namespace rldk {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t NAME_EVENTS = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t CONTENT_EVENTS = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE;

// Newest first: larger modification time, then larger name (run_0002 after run_0001 in the same second).
struct Rank {
  int64_t mtime_ns = 0;
  std::string name;
  bool operator<(const Rank& o) const { return mtime_ns != o.mtime_ns ? mtime_ns < o.mtime_ns : name < o.name; }
};

struct Candidate {
  Rank rank;
  dev_t device = 0;
  ino_t inode = 0;
};

bool has_extension(const std::string& name, const std::vector<std::string>& extensions) {
  for (const auto& ext : extensions) {
    if (name.size() <= ext.size()) continue;
    bool same = std::equal(ext.begin(), ext.end(), name.end() - static_cast<std::ptrdiff_t>(ext.size()),
                           [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) ==
                                                       std::tolower(static_cast<unsigned char>(b)); });
    if (same) return true;
  }
  return false;
}

std::string join(const std::string& directory, const std::string& name) {
  return directory.empty() || directory.back() == '/' ? directory + name : directory + "/" + name;
}

}  // namespace

struct DirectoryFollower::Impl {
  std::string directory;
  DirectoryFollowOptions options;
  io::DirectoryNotifier notifier;
  bool inotify = false;

  bool entries_changed = true;   // list the directory at the next call
  bool others_written = false;   // another file was written to: list it again, at a bounded rate
  Clock::time_point last_scan{};

  std::optional<FileFollower> current;
  std::string current_name;
  std::string current_path;
  Rank current_rank;
  std::set<std::pair<dev_t, ino_t>> current_ids;  // every inode seen under the current name
  std::set<std::pair<dev_t, ino_t>> left_behind;  // files switched away from: never followed again
  std::string pending;                            // a newer file to switch to once the current one is finished
  bool swallow_appeared = false;                  // the follower's first `appeared` repeats `switched`

  void ensure_watch() {
    if (!inotify || notifier.watching_directory()) return;
    auto watch = notifier.watch_directory(directory, NAME_EVENTS | CONTENT_EVENTS);
    if (watch == io::DirectoryNotifier::Watch::watching) {
      entries_changed = true;  // files created before the watch existed produced no event
    } else if (watch == io::DirectoryNotifier::Watch::unsupported) {
      notifier.close();
      inotify = false;
      entries_changed = true;
    }
  }

  void drain() {
    notifier.drain([this](std::string_view name, uint32_t mask) {
      if ((mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)) != 0) {
        entries_changed = true;
      } else if (name != current_name) {
        others_written = true;
      }
    });
  }

  bool scan_due(Clock::time_point now) const {
    auto since = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_scan).count();
    if (entries_changed) return true;
    if (others_written && since >= options.rescan_interval_ms) return true;
    bool watching = inotify && notifier.watching_directory();
    return since >= (watching ? options.follow.inotify_check_interval_ms : options.rescan_interval_ms);
  }

  // Lists the directory; sets `pending` when a file newer than the current one is there.
  Status scan() {
    last_scan = Clock::now();
    entries_changed = false;
    others_written = false;
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) {
      if (errno == ENOENT) return Ok{};  // not created yet
      if (errno == ENOTDIR) return Error{ErrorCode::unreadable, "not a directory", directory};
      return Error{ErrorCode::unreadable, std::string("cannot list directory: ") + std::strerror(errno), directory};
    }
    std::optional<Candidate> best;
    while (const dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name.empty() || name[0] == '.') continue;
      // TensorBoard event files have no extension of their own (events.out.tfevents.<time>.<host>.<pid>.<n>): a
      // folder that a SummaryWriter writes to is followed like a folder of JSONL logs.
      if (!has_extension(name, options.extensions) && !io::is_tensorboard_file(name)) continue;
      struct stat st {};
      if (::fstatat(::dirfd(dir), entry->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode)) continue;
      Candidate c{Rank{static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, name},
                  st.st_dev, st.st_ino};
      if (name == current_name) {
        current_rank = c.rank;
        current_ids.insert({c.device, c.inode});
        continue;
      }
      if (left_behind.count({c.device, c.inode}) != 0) continue;
      if (!best || best->rank < c.rank) best = c;
    }
    ::closedir(dir);
    // Only a file newer than the current one takes over: when the current file is deleted, the older files left in
    // the directory are not runs to fall back to.
    if (best && (!current || current_rank < best->rank)) pending = best->rank.name;
    return Ok{};
  }

  Result<ReadProgress> read_new(const FollowCallback& callback) {
    if (inotify) drain();
    ensure_watch();
    if (scan_due(Clock::now())) {
      auto scanned = scan();
      if (!scanned.ok()) return scanned.error();
    }
    ReadProgress progress;
    auto forward = [&](const FollowEvent& event) {
      if (event.kind == FollowEventKind::appeared && swallow_appeared) {
        swallow_appeared = false;
        return;
      }
      callback(event);
    };
    if (current) {
      auto read = current->read_new(forward);
      if (!read.ok()) return read.error();
      progress = read.value();
      if (progress.more || pending.empty()) return progress;
    }
    if (pending.empty()) return progress;
    // Switch. The old file was read to its end above; the new one is read by the next call, which the caller makes
    // at once because of `more` (so one call never reads two files' worth of data).
    for (const auto& id : current_ids) left_behind.insert(id);
    current_ids.clear();
    current_name = std::exchange(pending, {});
    current_path = join(directory, current_name);
    FollowOptions inner = options.follow;
    inner.use_inotify = false;  // this class's directory watch wakes the caller for the file's writes
    inner.start_at_end = options.follow.start_at_end && !current;
    auto follower = FileFollower::open(current_path, inner);
    if (!follower.ok()) return follower.error();
    current.emplace(std::move(follower.value()));
    current_rank = Rank{};
    entries_changed = true;  // pick up the new file's rank and identity at the next call
    swallow_appeared = true;
    callback(FollowEvent{FollowEventKind::switched, {}, current_path});
    progress.more = true;
    return progress;
  }
};

DirectoryFollower::DirectoryFollower(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DirectoryFollower::~DirectoryFollower() = default;
DirectoryFollower::DirectoryFollower(DirectoryFollower&&) noexcept = default;
DirectoryFollower& DirectoryFollower::operator=(DirectoryFollower&&) noexcept = default;

Result<DirectoryFollower> DirectoryFollower::open(const std::string& directory, const DirectoryFollowOptions& options) {
  if (directory.empty()) return Error{ErrorCode::invalid_argument, "no directory to follow (empty path)", ""};
  if (auto valid = io::validate_follow_options(options.follow); !valid.ok()) return valid.error();
  if (options.rescan_interval_ms <= 0) {
    return Error{ErrorCode::invalid_argument, "rescan_interval_ms must be positive", directory};
  }
  if (options.extensions.empty()) {
    return Error{ErrorCode::invalid_argument, "no run file extensions given", directory};
  }
  auto impl = std::make_unique<Impl>();
  impl->directory = directory;
  impl->options = options;
  impl->inotify = options.follow.use_inotify && impl->notifier.create();
  impl->ensure_watch();
  return DirectoryFollower(std::move(impl));
}

int DirectoryFollower::poll_fd() const { return impl_->inotify ? impl_->notifier.fd() : -1; }

int DirectoryFollower::suggested_timeout_ms() const {
  const auto& o = impl_->options;
  if (!(impl_->inotify && impl_->notifier.watching_directory())) return o.follow.poll_interval_ms;
  return impl_->others_written ? std::min(o.rescan_interval_ms, o.follow.inotify_check_interval_ms)
                               : o.follow.inotify_check_interval_ms;
}

void DirectoryFollower::wait(int max_ms) const {
  io::wait_readable(poll_fd(), std::min(max_ms, suggested_timeout_ms()));
}

Result<ReadProgress> DirectoryFollower::read_new(const FollowCallback& callback) { return impl_->read_new(callback); }

const std::string& DirectoryFollower::directory() const { return impl_->directory; }
const std::string& DirectoryFollower::current_path() const { return impl_->current_path; }

}  // namespace rldk
