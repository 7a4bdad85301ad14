#include "checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rldk::ckpt {

MappedFile::~MappedFile() {
  if (data_ != nullptr && size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
}

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Error{err == ENOENT ? ErrorCode::not_found : ErrorCode::unreadable, std::strerror(err), path};
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{ErrorCode::unreadable, "not a regular file", path};
  }
  size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Error{ErrorCode::unreadable, std::string("cannot map the file: ") + std::strerror(err), path};
    }
    // Tensors are read front to back, once: tell the kernel to read ahead and not keep pages around.
    madvise(p, size, MADV_SEQUENTIAL);
    data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file alive
  return std::shared_ptr<MappedFile>(new MappedFile(path, data, size));
}

}  // namespace rldk::ckpt
