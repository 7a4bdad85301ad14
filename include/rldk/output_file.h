// Every file rldk writes goes through here, so no command can destroy what it reads or leave half a report:
// - an output that is, links to, or lies inside an input being read is refused before anything is opened
//   (compared by device and inode, so symlinks, hard links, `./a` vs `a` all count as the same file);
// - a report is written to a temporary file beside it and renamed into place, so an interrupted run leaves the
//   old file or the new one, never a truncated one.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/result.h"

namespace rldk {

// Error (ErrorCode::invalid_argument, context = output) when `output` is one of `inputs`, a link to one, or lies
// inside an input folder. "-" (stdout/stdin) is never a file and always passes. Inputs that do not exist are
// skipped: a missing input is the reader's error to report, not this one.
Status check_output_outside_inputs(const std::filesystem::path& output, const std::vector<std::string>& inputs);

// Writes `text` to `path` atomically: temp file in the same folder, flushed, fsync'd, renamed over `path`.
Status write_file_atomic(const std::filesystem::path& path, std::string_view text);

// A streamed output written atomically: bytes go to a temporary file beside `path`; commit() renames it into place.
// Destroyed without commit() (an error, an exception, a signal handler's exit path), the temporary file is removed
// and whatever was at `path` before is untouched. A name ending in .gz or .zst is written compressed that way.
class AtomicOutputFile {
 public:
  static Result<AtomicOutputFile> open(const std::filesystem::path& path);
  AtomicOutputFile(AtomicOutputFile&& other) noexcept;
  AtomicOutputFile& operator=(AtomicOutputFile&&) = delete;
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  ~AtomicOutputFile();

  std::FILE* stream() const { return stream_; }
  Status commit();

 private:
  AtomicOutputFile(std::filesystem::path path, std::filesystem::path temp, std::FILE* file, std::FILE* stream)
      : path_(std::move(path)), temp_(std::move(temp)), file_(file), stream_(stream) {}
  std::filesystem::path path_, temp_;
  std::FILE* file_ = nullptr;    // the temporary file
  std::FILE* stream_ = nullptr;  // what callers write to: file_ itself, or a compressor writing into it
};

}  // namespace rldk
