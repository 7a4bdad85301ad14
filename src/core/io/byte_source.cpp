#include "io/byte_source.h"

#include "io/utf16.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace rldk::io {
namespace {

constexpr size_t RAW_CHUNK = 1 << 20;

// Owns a file descriptor and reads raw bytes from it.
class FdReader {
 public:
  explicit FdReader(int fd, bool owned) : fd_(fd), owned_(owned) {}
  ~FdReader() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  FdReader(const FdReader&) = delete;
  FdReader& operator=(const FdReader&) = delete;

  // Returns bytes read, 0 at EOF, -1 on error (errno kept in error_).
  ssize_t read(char* buffer, size_t capacity) {
    for (;;) {
      ssize_t n = ::read(fd_, buffer, capacity);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      error_ = std::strerror(errno);
      return -1;
    }
  }
  const std::string& error() const { return error_; }

 private:
  int fd_;
  bool owned_;
  std::string error_;
};

// The file's bytes as they are (after the sniffed head, which PrefixedSource replays first).
class PlainSource final : public ByteSource {
 public:
  explicit PlainSource(std::unique_ptr<FdReader> fd) : fd_(std::move(fd)) {}
  size_t read(char* buffer, size_t capacity) override {
    ssize_t n = fd_->read(buffer, capacity);
    if (n < 0) {
      problem_ = "read error: " + fd_->error();
      return 0;
    }
    return static_cast<size_t>(n);
  }
  std::string problem() const override { return problem_; }
  std::string compression() const override { return ""; }

 private:
  std::unique_ptr<FdReader> fd_;
  std::string problem_;
};

// Feeds compressed bytes to a decoder in chunks; shared by the gzip and zstd sources.
class CompressedInput {
 public:
  CompressedInput(std::unique_ptr<FdReader> fd, std::string head) : fd_(std::move(fd)), buffer_(std::move(head)) {}
  // Makes sure there are unconsumed input bytes; false at end of input or on a read error.
  bool refill() {
    if (pos_ < buffer_.size()) return true;
    if (eof_) return false;
    buffer_.resize(RAW_CHUNK);
    ssize_t n = fd_->read(buffer_.data(), buffer_.size());
    if (n <= 0) {
      if (n < 0) error_ = "read error: " + fd_->error();
      eof_ = true;
      buffer_.clear();
      pos_ = 0;
      return false;
    }
    buffer_.resize(static_cast<size_t>(n));
    pos_ = 0;
    return true;
  }
  const char* data() const { return buffer_.data() + pos_; }
  size_t size() const { return buffer_.size() - pos_; }
  void consume(size_t n) {
    pos_ += n;
    total_ += n;
  }
  uint64_t total_consumed() const { return total_; }
  const std::string& error() const { return error_; }

 private:
  std::unique_ptr<FdReader> fd_;
  std::string buffer_;
  size_t pos_ = 0;
  uint64_t total_ = 0;
  bool eof_ = false;
  std::string error_;
};

class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<FdReader> fd, std::string head) : in_(std::move(fd), std::move(head)) {
    std::memset(&stream_, 0, sizeof(stream_));
    // 15 + 32: zlib or gzip header, detected automatically.
    if (inflateInit2(&stream_, 15 + 32) != Z_OK) problem_ = "cannot initialise the gzip decoder";
    initialised_ = problem_.empty();
  }
  ~GzipSource() override {
    if (initialised_) inflateEnd(&stream_);
  }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(char* buffer, size_t capacity) override {
    if (done_ || !problem_.empty()) return 0;
    stream_.next_out = reinterpret_cast<Bytef*>(buffer);
    stream_.avail_out = static_cast<uInt>(std::min<size_t>(capacity, 1u << 30));
    while (stream_.avail_out > 0) {
      if (!in_.refill()) {
        if (!in_.error().empty()) {
          problem_ = in_.error();
        } else if (!at_member_end_) {
          problem_ = "gzip stream is truncated (" + std::to_string(in_.total_consumed()) + " compressed bytes read)";
        }
        done_ = true;
        break;
      }
      stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data()));
      stream_.avail_in = static_cast<uInt>(in_.size());
      int rc = inflate(&stream_, Z_NO_FLUSH);
      in_.consume(in_.size() - stream_.avail_in);
      at_member_end_ = false;
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members (e.g. appended with `gzip >>`) are one stream to the user.
        at_member_end_ = true;
        inflateReset(&stream_);
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        problem_ = std::string("corrupt gzip data: ") + (stream_.msg ? stream_.msg : "inflate failed") + " (at " +
                   std::to_string(in_.total_consumed()) + " compressed bytes)";
        break;
      }
      if (rc == Z_BUF_ERROR && stream_.avail_in == 0) continue;  // needs more input
    }
    return capacity - stream_.avail_out;
  }
  std::string problem() const override { return problem_; }
  std::string compression() const override { return "gzip"; }

 private:
  CompressedInput in_;
  z_stream stream_;
  bool initialised_ = false;
  bool done_ = false;
  bool at_member_end_ = false;
  std::string problem_;
};

class ZstdSource final : public ByteSource {
 public:
  ZstdSource(std::unique_ptr<FdReader> fd, std::string head)
      : in_(std::move(fd), std::move(head)), stream_(ZSTD_createDStream()) {
    if (stream_ == nullptr) problem_ = "cannot initialise the zstd decoder";
  }
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;

  size_t read(char* buffer, size_t capacity) override {
    if (done_ || !problem_.empty()) return 0;
    ZSTD_outBuffer out{buffer, capacity, 0};
    while (out.pos < out.size) {
      if (!in_.refill()) {
        if (!in_.error().empty()) {
          problem_ = in_.error();
        } else if (!frame_complete_) {
          problem_ = "zstd stream is truncated (" + std::to_string(in_.total_consumed()) + " compressed bytes read)";
        }
        done_ = true;
        break;
      }
      ZSTD_inBuffer input{in_.data(), in_.size(), 0};
      size_t rc = ZSTD_decompressStream(stream_, &out, &input);
      in_.consume(input.pos);
      if (ZSTD_isError(rc)) {
        problem_ = std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc) + " (at " +
                   std::to_string(in_.total_consumed()) + " compressed bytes)";
        break;
      }
      frame_complete_ = (rc == 0);
      if (input.pos == 0 && out.pos == 0 && rc != 0 && in_.size() > 0) continue;
    }
    return out.pos;
  }
  std::string problem() const override { return problem_; }
  std::string compression() const override { return "zstd"; }

 private:
  CompressedInput in_;
  ZSTD_DStream* stream_;
  bool done_ = false;
  bool frame_complete_ = true;
  std::string problem_;
};

// Replays bytes already read from a source (its first bytes, read to recognise compression or a byte-order mark),
// then reads on from it.
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string head, std::unique_ptr<ByteSource> inner)
      : head_(std::move(head)), inner_(std::move(inner)) {}
  size_t read(char* buffer, size_t capacity) override {
    if (pos_ < head_.size()) {
      size_t n = std::min(capacity, head_.size() - pos_);
      std::memcpy(buffer, head_.data() + pos_, n);
      pos_ += n;
      return n;
    }
    return inner_->read(buffer, capacity);
  }
  std::string problem() const override { return inner_->problem(); }
  std::string compression() const override { return inner_->compression(); }

 private:
  std::string head_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

// Text saved as UTF-16 with a byte-order mark, read as UTF-8 (io/utf16.h).
class Utf16Source final : public ByteSource {
 public:
  Utf16Source(std::unique_ptr<ByteSource> inner, bool big_endian) : inner_(std::move(inner)), decoder_(big_endian) {}
  size_t read(char* buffer, size_t capacity) override {
    size_t out = 0;
    while (out < capacity) {
      if (pos_ < decoded_.size()) {
        size_t n = std::min(capacity - out, decoded_.size() - pos_);
        std::memcpy(buffer + out, decoded_.data() + pos_, n);
        pos_ += n;
        out += n;
        continue;
      }
      decoded_.clear();
      pos_ = 0;
      if (ended_) break;
      raw_.resize(RAW_CHUNK);
      size_t n = inner_->read(raw_.data(), raw_.size());
      if (n == 0) {
        ended_ = true;
        decoder_.finish(decoded_);
      } else {
        decoder_.decode(std::string_view(raw_.data(), n), decoded_);
      }
    }
    return out;
  }
  std::string problem() const override { return inner_->problem(); }
  std::string compression() const override { return inner_->compression(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  Utf16Decoder decoder_;
  std::string raw_, decoded_;
  size_t pos_ = 0;
  bool ended_ = false;
};

// A UTF-16 byte-order mark at the start of the (decompressed) data: transcoded to UTF-8 from there on.
std::unique_ptr<ByteSource> decode_utf16(std::unique_ptr<ByteSource> source) {
  std::string head(2, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = source->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  if (std::optional<bool> big_endian = utf16_byte_order(head)) {
    return std::make_unique<Utf16Source>(std::move(source), *big_endian);
  }
  return std::make_unique<PrefixedSource>(std::move(head), std::move(source));
}

}  // namespace

Result<std::unique_ptr<ByteSource>> open_byte_source(const std::string& path) {
  std::unique_ptr<FdReader> fd;
  if (path == "-") {
    fd = std::make_unique<FdReader>(STDIN_FILENO, false);
  } else {
    // Decided before open(): opening a FIFO blocks until a writer comes, and a device can stream forever.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return Error{ErrorCode::unreadable, "is a directory, expected a file", path};
      if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
        return Error{ErrorCode::unreadable,
                     "is a device or socket, not a log file (to read a stream, pipe it into `rldk ... -`)", path};
      }
      if (S_ISFIFO(st.st_mode)) {
        std::fprintf(stderr, "rldk: %s is a FIFO: waiting for a program to open it for writing (Ctrl-C to stop)\n",
                     path.c_str());
      }
    }
    int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (raw < 0) {
      int err = errno;
      ErrorCode code = err == ENOENT ? ErrorCode::not_found : ErrorCode::unreadable;
      std::string why = err == ENOENT ? "no such file or directory" : std::strerror(err);
      return Error{code, "cannot open: " + why, path};
    }
    fd = std::make_unique<FdReader>(raw, true);
  }
  // Sniff the magic number. A short read is fine: small files are replayed as plain bytes.
  std::string head(4, '\0');
  size_t got = 0;
  while (got < head.size()) {
    ssize_t n = fd->read(head.data() + got, head.size() - got);
    if (n < 0) return Error{ErrorCode::unreadable, "cannot read: " + fd->error(), path};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  const auto* b = reinterpret_cast<const unsigned char*>(head.data());
  if (got >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    return {decode_utf16(std::make_unique<GzipSource>(std::move(fd), head))};
  }
  if (got >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    return {decode_utf16(std::make_unique<ZstdSource>(std::move(fd), head))};
  }
  if (std::optional<bool> big_endian = utf16_byte_order(head)) {
    return {std::make_unique<Utf16Source>(
        std::make_unique<PrefixedSource>(head.substr(2), std::make_unique<PlainSource>(std::move(fd))), *big_endian)};
  }
  return {std::make_unique<PrefixedSource>(head, std::make_unique<PlainSource>(std::move(fd)))};
}

}  // namespace rldk::io
