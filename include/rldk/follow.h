// Live input: follow a file a trainer is still writing, the newest run file in a directory, or a pipe (stdin).
//
// All three sources have the same shape, made for one poll(2) loop that also watches a child process:
//
//   for (;;) {
//     pollfd p{source.poll_fd(), POLLIN, 0};            // -1 in polling mode: poll() then just sleeps
//     poll(&p, 1, source.suggested_timeout_ms());
//     auto progress = source.read_new(on_event);         // never blocks; call it after every wake-up or timeout
//     ...                                                // progress->more: call again at once, a backlog is left
//   }
//
// read_new() hands over the bytes that arrived since the last call, in chunks of at most
// FollowOptions::chunk_bytes, plus events that tell the caller to reset its parser (truncated, replaced, switched).
// Bytes are raw: a chunk may end in the middle of a line, which is fine because StreamReader::feed() buffers the
// partial last line until its newline arrives. On truncated / replaced / switched the caller should finish() the
// current StreamReader (that parses a partial last line of the old file, if any) and start a new one.
//
// Linux only: inotify wakes the loop within a few milliseconds of a write. Where inotify is unavailable, disabled,
// or cannot see writes (network and cluster file systems: NFS, SMB, Lustre, GPFS, Ceph, FUSE, 9p, ...), the
// sources fall back to polling: poll_fd() returns -1 and suggested_timeout_ms() says how often to call read_new().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/result.h"

namespace rldk {

enum class FollowEventKind {
  data,       // `bytes` holds the next bytes of the current file or stream
  appeared,   // `path` now names the file being read: it was opened for the first time, or it is back after vanished
  truncated,  // the file shrank below what was already read (reopened with "w", truncate(1)); reading restarts at 0
  replaced,   // another file now sits at `path` (rename over it, logrotate, delete + recreate). The old file was read
              // to its end first; the new one is read from 0
  vanished,   // `path` no longer names the file being read. The open file is still read (a writer that holds it
              // open may keep appending), until a file appears at `path` again (replaced, or appeared if it is the
              // same file renamed back)
  switched,   // DirectoryFollower only: now following `path`, a newer run file, from 0 (also for the first file)
  ended,      // FdSource only: end of the stream (the writer closed the pipe); nothing more will come
};

// Returns "data", "appeared", ... for logs and messages.
std::string_view follow_event_name(FollowEventKind kind);

// One event. `bytes` and `path` point into the source's buffers: valid only during the callback.
struct FollowEvent {
  FollowEventKind kind = FollowEventKind::data;
  std::string_view bytes;  // data only
  std::string_view path;   // the path the event is about (empty for data and ended)
};

using FollowCallback = std::function<void(const FollowEvent&)>;

// What one read_new() call did.
struct ReadProgress {
  uint64_t bytes = 0;  // data bytes delivered by this call
  bool more = false;   // stopped at FollowOptions::max_bytes_per_call with data left: call read_new() again now
};

struct FollowOptions {
  // Largest `bytes` in one data event (and the size of the read buffer).
  size_t chunk_bytes = size_t{64} << 10;
  // Most data bytes one read_new() call delivers, so a large backlog (following a long log from its start) does not
  // hold up a loop that also reads a child's output; the rest comes with the next calls (ReadProgress::more).
  size_t max_bytes_per_call = size_t{4} << 20;
  // false forces the polling fallback even where inotify works (tests; file systems the built-in list misses).
  bool use_inotify = true;
  // Polling mode: how often read_new() should be called. Each call costs about two stat-like system calls.
  int poll_interval_ms = 50;
  // inotify mode: how often read_new() should be called anyway, to catch what inotify cannot report (the watched
  // directory itself replaced, a symlinked path retargeted elsewhere, a dropped event queue).
  int inotify_check_interval_ms = 1000;
  // Start at the current end of an already existing file (like `tail -f`) instead of its beginning. Applies to the
  // file found when following starts, never to files that appear, replace it, or are switched to later.
  bool start_at_end = false;
};

// Follows one file path that may not exist yet. Not thread-safe; movable.
class FileFollower {
 public:
  // Errors: invalid_argument for an empty path or a zero chunk/budget. A missing file is not an error (it is
  // waited for); a path that names a directory fails in read_new().
  static Result<FileFollower> open(const std::string& path, const FollowOptions& options = {});
  ~FileFollower();
  FileFollower(FileFollower&&) noexcept;
  FileFollower& operator=(FileFollower&&) noexcept;

  // An inotify descriptor to poll for POLLIN, or -1 in polling mode. Ask again before each poll(): it turns to -1
  // when the follower finds that the file's directory is on a file system inotify cannot watch.
  int poll_fd() const;
  // The poll() timeout to use: the polling interval in polling mode (or while the directory does not exist yet),
  // else the inotify safety interval.
  int suggested_timeout_ms() const;
  // Waits until poll_fd() is readable or min(max_ms, suggested_timeout_ms()) passes; never longer. A convenience
  // for loops that watch nothing else.
  void wait(int max_ms) const;
  // Delivers events and the bytes appended since the last call; never blocks on the file. Errors (unreadable:
  // permission denied, a directory, an I/O error) leave the follower usable: the next call tries again.
  Result<ReadProgress> read_new(const FollowCallback& callback);

  const std::string& path() const;
  bool is_open() const;      // a file is open (it appeared and has not been replaced by a missing one)
  uint64_t offset() const;   // bytes of the open file read so far

 private:
  struct Impl;
  explicit FileFollower(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct DirectoryFollowOptions {
  FollowOptions follow;
  // File name endings (lower case, compared case-insensitively) that make a file a run file. Hidden files (name
  // starts with '.') never count. Only the directory itself is searched, not its subdirectories.
  std::vector<std::string> extensions = {".jsonl", ".ndjson", ".csv", ".tsv", ".log", ".txt"};
  // Polling mode: how often the directory is listed again to look for a newer file (listing costs one stat per
  // entry, so it runs less often than the cheap check of the current file). In inotify mode the directory is
  // listed when it changes, and at the inotify check interval.
  int rescan_interval_ms = 500;
};

// Follows the newest run file in a directory (largest mtime; on equal mtimes the larger name), switching when a
// newer one appears. A file it switched away from is never followed again (unless a new file is created under its
// name), so two files written at once do not make it flip back and forth and read each again from the start.
class DirectoryFollower {
 public:
  // Errors: invalid_argument for an empty path or bad options. A missing directory is waited for; a path that
  // names a file fails in read_new().
  static Result<DirectoryFollower> open(const std::string& directory, const DirectoryFollowOptions& options = {});
  ~DirectoryFollower();
  DirectoryFollower(DirectoryFollower&&) noexcept;
  DirectoryFollower& operator=(DirectoryFollower&&) noexcept;

  int poll_fd() const;               // as FileFollower::poll_fd
  int suggested_timeout_ms() const;  // as FileFollower::suggested_timeout_ms
  void wait(int max_ms) const;       // as FileFollower::wait
  // As FileFollower::read_new, plus `switched` (with the new path) before the first bytes of each file.
  Result<ReadProgress> read_new(const FollowCallback& callback);

  const std::string& directory() const;
  const std::string& current_path() const;  // empty until a run file is found

 private:
  struct Impl;
  explicit DirectoryFollower(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct FdSourceOptions {
  size_t chunk_bytes = size_t{64} << 10;         // as FollowOptions::chunk_bytes
  size_t max_bytes_per_call = size_t{4} << 20;   // as FollowOptions::max_bytes_per_call
};

// Reads a pipe, terminal, or any readable descriptor (stdin for "-") to its end without blocking. The descriptor's
// file status flags are left alone: O_NONBLOCK would be shared with every process holding the same open file (the
// user's shell, for a terminal), so each read is preceded by a zero-timeout poll() instead.
class FdSource {
 public:
  // `owned`: close the descriptor at the end of the stream or on destruction.
  explicit FdSource(int fd, bool owned = false, const FdSourceOptions& options = {});
  static FdSource standard_input(const FdSourceOptions& options = {});
  ~FdSource();
  FdSource(FdSource&&) noexcept;
  FdSource& operator=(FdSource&&) noexcept;
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;

  int poll_fd() const;  // the descriptor; -1 after the end
  bool at_end() const;
  // Delivers what can be read now, and `ended` once at the end of the stream. Errors: io (a read error; the source
  // then counts as ended).
  Result<ReadProgress> read_new(const FollowCallback& callback);

 private:
  int fd_ = -1;
  bool owned_ = false;
  bool ended_ = false;
  FdSourceOptions options_;
  std::vector<char> buffer_;
};

}  // namespace rldk
