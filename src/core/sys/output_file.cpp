#include "rldk/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "io/compressing_stream.h"
#include "sys/write_all.h"

namespace rldk {
namespace fs = std::filesystem;
namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool dir;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

bool identify(const fs::path& path, FileId& id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  id = {st.st_dev, st.st_ino, S_ISDIR(st.st_mode)};
  return true;
}

// The nearest folder of `path` that exists (the writer creates the missing ones), made absolute.
fs::path nearest_existing_folder(const fs::path& path) {
  std::error_code ec;
  fs::path dir = fs::absolute(path, ec).parent_path();
  while (!dir.empty() && !fs::exists(dir, ec) && dir != dir.root_path()) dir = dir.parent_path();
  return dir.empty() ? fs::path("/") : dir;
}

Error refusal(const fs::path& output, const std::string& input, bool inside) {
  return Error{ErrorCode::invalid_argument,
               inside ? "output lies inside the input folder " + input + "; it would be read back as input. "
                        "Write it somewhere else"
                      : "output is the input " + input + " (the same file, or a link to it); writing it would "
                        "destroy what is being read. Write it somewhere else",
               output.string()};
}

mode_t new_file_mode(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;  // replacing a file keeps its permissions
  // umask() can only be read by setting it; /proc/self/status has it without that race (Linux >= 4.7).
  mode_t mask = 022;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) == 0) mask = static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  }
  return 0666 & ~mask;
}

Result<std::pair<fs::path, int>> make_temp_beside(const fs::path& path) {
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::string name = (dir / ("." + path.filename().string() + ".rldk-tmp-XXXXXX")).string();
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return Error{ErrorCode::io, std::string("cannot create a file here: ") + std::strerror(errno), path.string()};
  ::fchmod(fd, new_file_mode(path));
  return std::make_pair(fs::path(name), fd);
}

Status finish_rename(const fs::path& temp, const fs::path& path) {
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return Error{ErrorCode::io, std::string("cannot replace the file: ") + std::strerror(err), path.string()};
  }
  return Ok{};
}

}  // namespace

Status check_output_outside_inputs(const fs::path& output, const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") return Ok{};
  std::vector<std::pair<FileId, std::string>> ids;
  for (const auto& input : inputs) {
    FileId id{};
    if (input != "-" && identify(input, id)) ids.emplace_back(id, input);
  }
  if (ids.empty()) return Ok{};
  FileId out{};
  if (identify(output, out)) {
    for (const auto& [id, name] : ids) {
      if (id == out) return refusal(output, name, false);
    }
  }
  // Walk up through the physical parents (`..` as the kernel resolves it, so symlinked folders count too).
  fs::path dir = nearest_existing_folder(output);
  FileId here{};
  if (!identify(dir, here)) return Ok{};
  for (int depth = 0; depth < 4096; ++depth) {
    for (const auto& [id, name] : ids) {
      if (id.dir && id == here) return refusal(output, name, true);
    }
    dir /= "..";
    FileId up{};
    if (!identify(dir, up) || up == here) break;  // the root is its own parent
    here = up;
  }
  return Ok{};
}

Status write_file_atomic(const fs::path& path, std::string_view text) {
  auto temp = make_temp_beside(path);
  if (!temp.ok()) return temp.error();
  auto [name, fd] = temp.value();
  if (int err = sys::write_all(fd, text)) {
    ::close(fd);
    ::unlink(name.c_str());
    return Error{ErrorCode::io, std::string("write failed: ") + std::strerror(err), path.string()};
  }
  bool synced = ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 || !synced) {
    ::unlink(name.c_str());
    return Error{ErrorCode::io, std::string("write failed: ") + std::strerror(synced ? errno : err), path.string()};
  }
  return finish_rename(name, path);
}

Result<AtomicOutputFile> AtomicOutputFile::open(const fs::path& path) {
  auto temp = make_temp_beside(path);
  if (!temp.ok()) return temp.error();
  auto [name, fd] = temp.value();
  std::FILE* file = ::fdopen(fd, "wb");
  io::OutputCodec codec = io::codec_for_output(path);
  std::FILE* stream = file && codec != io::OutputCodec::none ? io::open_compressing_stream(file, codec) : file;
  if (stream == nullptr) {
    if (file != nullptr) {
      std::fclose(file);
    } else {
      ::close(fd);
    }
    ::unlink(name.c_str());
    return Error{ErrorCode::io, "cannot open for writing", path.string()};
  }
  return AtomicOutputFile(path, name, file, stream);
}

AtomicOutputFile::AtomicOutputFile(AtomicOutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::move(other.temp_)),
      file_(std::exchange(other.file_, nullptr)),
      stream_(std::exchange(other.stream_, nullptr)) {}

AtomicOutputFile::~AtomicOutputFile() {
  if (file_ == nullptr) return;
  if (stream_ != file_) std::fclose(stream_);
  std::fclose(file_);
  ::unlink(temp_.c_str());
}

Status AtomicOutputFile::commit() {
  if (file_ == nullptr) return Error{ErrorCode::io, "already committed", path_.string()};
  // Closing the compressor writes the end of its frame into the file, which is then flushed to disk.
  bool ok = stream_ == file_ || std::fclose(stream_) == 0;
  stream_ = nullptr;
  ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0 && ok;
  int err = errno;
  ok = (std::fclose(std::exchange(file_, nullptr)) == 0) && ok;
  if (!ok) {
    ::unlink(temp_.c_str());
    return Error{ErrorCode::io, std::string("write failed: ") + std::strerror(err), path_.string()};
  }
  return finish_rename(temp_, path_);
}

}  // namespace rldk
