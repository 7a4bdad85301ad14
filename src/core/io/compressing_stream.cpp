#include "io/compressing_stream.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

namespace rldk::io {
namespace {

struct Compressor {
  std::FILE* sink;
  OutputCodec codec;
  z_stream gz{};
  ZSTD_CCtx* zstd = nullptr;
  std::vector<char> buffer = std::vector<char>(1 << 16);
  bool failed = false;

  bool emit(const char* data, size_t size) {
    if (size > 0 && std::fwrite(data, 1, size, sink) != size) failed = true;
    return !failed;
  }

  // Compresses `size` bytes (finishing the frame when `last`), writing all output produced.
  bool push(const char* data, size_t size, bool last) {
    if (codec == OutputCodec::gzip) {
      gz.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      gz.avail_in = static_cast<uInt>(size);
      int rc = Z_OK;
      do {
        gz.next_out = reinterpret_cast<Bytef*>(buffer.data());
        gz.avail_out = static_cast<uInt>(buffer.size());
        rc = deflate(&gz, last ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) return false;
        if (!emit(buffer.data(), buffer.size() - gz.avail_out)) return false;
      } while (gz.avail_out == 0 || (last && rc != Z_STREAM_END));
      return true;
    }
    ZSTD_inBuffer in{data, size, 0};
    for (;;) {
      ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
      size_t remaining = ZSTD_compressStream2(zstd, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(remaining)) return false;
      if (!emit(buffer.data(), out.pos)) return false;
      if (last ? remaining == 0 : in.pos == in.size) return true;
    }
  }
};

ssize_t compress_write(void* cookie, const char* data, size_t size) {
  auto* c = static_cast<Compressor*>(cookie);
  // zlib counts input in 32-bit units: feed huge writes in slices.
  for (size_t done = 0; done < size;) {
    size_t n = std::min<size_t>(size - done, 1u << 30);
    if (!c->push(data + done, n, false)) {
      errno = EIO;
      return -1;
    }
    done += n;
  }
  return static_cast<ssize_t>(size);
}

int compress_close(void* cookie) {
  auto* c = static_cast<Compressor*>(cookie);
  bool ok = c->push(nullptr, 0, true) && !c->failed && std::fflush(c->sink) == 0;
  if (c->codec == OutputCodec::gzip) deflateEnd(&c->gz);
  ZSTD_freeCCtx(c->zstd);
  delete c;
  return ok ? 0 : EOF;
}

bool ends_with(const std::string& s, const char* suffix) {
  std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

OutputCodec codec_for_output(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  if (ends_with(name, ".gz")) return OutputCodec::gzip;
  if (ends_with(name, ".zst") || ends_with(name, ".zstd")) return OutputCodec::zstd;
  return OutputCodec::none;
}

std::FILE* open_compressing_stream(std::FILE* sink, OutputCodec codec) {
  auto* c = new Compressor{sink, codec};
  bool ready = codec == OutputCodec::gzip
                   ? deflateInit2(&c->gz, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16 /* gzip header */, 8,
                                  Z_DEFAULT_STRATEGY) == Z_OK
                   : (c->zstd = ZSTD_createCCtx()) != nullptr;
  if (!ready) {
    delete c;
    return nullptr;
  }
  cookie_io_functions_t io{};
  io.write = compress_write;
  io.close = compress_close;
  std::FILE* stream = fopencookie(c, "w", io);
  if (stream == nullptr) compress_close(c);
  return stream;
}

}  // namespace rldk::io
