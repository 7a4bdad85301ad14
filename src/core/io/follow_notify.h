// Change notification for the followers: one inotify instance watching a directory (and, optionally, the inode of
// an open file), plus the check for file systems whose changes inotify does not report.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "sys/unique_fd.h"

namespace rldk::io {

// False for network and cluster file systems (NFS, SMB/CIFS, Lustre, GPFS, Ceph, BeeGFS, FUSE, 9p, ...): there a
// trainer on another host writes without any local inotify event, so the followers must poll. True when the type
// cannot be determined (the directory is then watched and also checked at the safety interval).
bool inotify_sees_changes(const std::string& directory);

// The directory part of a file path ("." for a bare name).
std::string parent_directory(const std::string& path);

class DirectoryNotifier {
 public:
  enum class Watch {
    watching,     // events will arrive
    missing,      // the directory does not exist (or cannot be searched) yet: try again later
    unsupported,  // inotify cannot serve this directory (file system type, watch limit): poll instead
  };

  // Creates the inotify instance (non-blocking, close-on-exec); false where inotify is unavailable (kernel without
  // it, or the per-user instance limit fs.inotify.max_user_instances reached).
  bool create();
  void close();
  int fd() const { return fd_.get(); }
  bool watching_directory() const { return dir_wd_ >= 0; }

  // Watches `directory` for `mask` (IN_* bits; IN_ONLYDIR is added).
  Watch watch_directory(const std::string& directory, uint32_t mask);
  // Watches the inode behind `fd` (through /proc/self/fd, so a path that is a symlink into another directory is
  // covered too) for writes and truncation. False when that is not possible; the caller then asks for IN_MODIFY
  // on the directory instead.
  bool watch_open_file(int fd);
  void unwatch_file();

  // Reads every queued event without blocking. `on_child` gets (name, mask) for events about entries of the watched
  // directory. Returns true when anything was read. Afterwards watching_directory() is false if the directory was
  // deleted or moved away (it must be watched again by path).
  bool drain(const std::function<void(std::string_view name, uint32_t mask)>& on_child);

 private:
  sys::UniqueFd fd_;
  int dir_wd_ = -1;
  int file_wd_ = -1;
};

}  // namespace rldk::io
