#include "io/follow_notify.h"

#include <sys/inotify.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace rldk::io {
namespace {

// statfs(2) f_type values of file systems where writes made on other hosts produce no local inotify event.
// FUSE is included because most FUSE mounts used for training logs are network-backed (sshfs, gcsfuse, s3fs).
constexpr std::array<uint32_t, 19> REMOTE_FILESYSTEMS = {
    0x6969,      // NFS
    0x517B,      // SMB
    0xFF534D42,  // CIFS
    0xFE534D42,  // SMB2
    0x65735546,  // FUSE
    0x00C36400,  // Ceph
    0x0BD00BD0,  // Lustre
    0x47504653,  // GPFS / IBM Storage Scale
    0x19830326,  // BeeGFS
    0x01021997,  // 9p (WSL2 drives, some VM and container shares)
    0x5346414F,  // AFS
    0x6B414653,  // kAFS
    0x73757245,  // Coda
    0x7461636F,  // OCFS2
    0x01161970,  // GFS2
    0xAAD7AAEA,  // PanFS
    0x786F4256,  // VirtualBox shared folders
    0x13661366,  // OrangeFS
    0x564C,      // NCP
};

// Enough for many events at once; inotify never splits an event across reads.
constexpr size_t EVENT_BUFFER_BYTES = 16 * 1024;

}  // namespace

bool inotify_sees_changes(const std::string& directory) {
  struct statfs info {};
  if (::statfs(directory.c_str(), &info) != 0) return true;
  auto type = static_cast<uint32_t>(info.f_type);
  for (uint32_t remote : REMOTE_FILESYSTEMS) {
    if (type == remote) return false;
  }
  return true;
}

std::string parent_directory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool DirectoryNotifier::create() {
  if (fd_) return true;
  fd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  return fd_.valid();
}

void DirectoryNotifier::close() {
  fd_.reset();
  dir_wd_ = -1;
  file_wd_ = -1;
}

DirectoryNotifier::Watch DirectoryNotifier::watch_directory(const std::string& directory, uint32_t mask) {
  if (!fd_) return Watch::unsupported;
  int wd = ::inotify_add_watch(fd_.get(), directory.c_str(), mask | IN_ONLYDIR);
  if (wd < 0) {
    // ENOSPC: fs.inotify.max_user_watches is exhausted; that will not change soon, so poll.
    if (errno == ENOSPC || errno == EINVAL) return Watch::unsupported;
    return Watch::missing;  // ENOENT, ENOTDIR (not created yet), EACCES (permissions may be fixed)
  }
  if (!inotify_sees_changes(directory)) {
    ::inotify_rm_watch(fd_.get(), wd);
    return Watch::unsupported;
  }
  // Same directory: the mask was replaced on the existing watch. Another inode at the path (the directory was
  // recreated): drop the stale watch so its events stop waking the caller.
  if (dir_wd_ >= 0 && dir_wd_ != wd) ::inotify_rm_watch(fd_.get(), dir_wd_);
  dir_wd_ = wd;
  return Watch::watching;
}

bool DirectoryNotifier::watch_open_file(int fd) {
  unwatch_file();
  if (!fd_) return false;
  std::string proc_path = "/proc/self/fd/" + std::to_string(fd);
  int wd = ::inotify_add_watch(fd_.get(), proc_path.c_str(), IN_MODIFY | IN_ATTRIB);
  if (wd < 0) return false;
  // The same inode as the directory (impossible for a regular file) would share the descriptor; guard anyway so
  // unwatch_file() never removes the directory watch.
  if (wd == dir_wd_) return false;
  file_wd_ = wd;
  return true;
}

void DirectoryNotifier::unwatch_file() {
  if (file_wd_ >= 0 && fd_) ::inotify_rm_watch(fd_.get(), file_wd_);
  file_wd_ = -1;
}

bool DirectoryNotifier::drain(const std::function<void(std::string_view name, uint32_t mask)>& on_child) {
  if (!fd_) return false;
  alignas(inotify_event) char buffer[EVENT_BUFFER_BYTES];
  bool any = false;
  for (;;) {
    ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: queue empty
    any = true;
    for (ssize_t pos = 0; pos < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + pos);
      pos += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->wd == dir_wd_ && dir_wd_ >= 0) {
        if ((event->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) != 0) {
          // The watch follows the inode, not the path: a moved directory would keep reporting from its new place.
          if ((event->mask & IN_IGNORED) == 0) ::inotify_rm_watch(fd_.get(), dir_wd_);
          dir_wd_ = -1;
          continue;
        }
        if (event->len > 0) on_child(std::string_view(event->name, std::strlen(event->name)), event->mask);
      } else if (event->wd == file_wd_ && (event->mask & IN_IGNORED) != 0) {
        file_wd_ = -1;
      }
    }
  }
  return any;
}

}  // namespace rldk::io
