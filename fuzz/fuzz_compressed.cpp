// Decompression of untrusted gzip/zstd data: the byte source reads through a memfd so the real file path is used.
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "io/byte_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  auto source = rldk::io::open_byte_source("/proc/self/fd/" + std::to_string(fd));
  if (source.ok()) {
    std::vector<char> buffer(4096);
    size_t total = 0;
    // Bounded: a decompression bomb must not run the fuzzer out of memory or time.
    while (total < (size_t{64} << 20)) {
      size_t n = source.value()->read(buffer.data(), buffer.size());
      if (n == 0) break;
      total += n;
    }
  }
  close(fd);
  return 0;
}
