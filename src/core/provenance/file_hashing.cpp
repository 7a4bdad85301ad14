// Whole-file hashing, one file per task on a small thread pool: XXH3 runs far above disk bandwidth, so one thread per
// core keeps several reads in flight, which is what a folder of shards on a fast disk (or in page cache) needs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rldk/provenance.h"

namespace fs = std::filesystem;

namespace rldk::provenance {
namespace {

// Large reads amortise the syscall; 4 MiB stays in L2/L3-friendly territory for the hash that follows.
constexpr size_t READ_CHUNK = size_t{4} << 20;

Error io_error(const std::string& path, int err, const char* what) {
  ErrorCode code = err == ENOENT || err == ENOTDIR ? ErrorCode::not_found : ErrorCode::unreadable;
  return Error{code, std::string(what) + ": " + std::strerror(err), path};
}

unsigned pool_size(unsigned threads, size_t tasks) {
  unsigned n = threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<size_t>(n, std::max<size_t>(tasks, 1)));
}

std::string generic(const fs::path& p) { return p.generic_string(); }

}  // namespace

Result<FileDigest> hash_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path, errno, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{ErrorCode::unreadable, "is a folder, not a file", path};
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buffer(READ_CHUNK);
  ContentHasher hasher;
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return io_error(path, err, "read failed");
    }
    if (n == 0) break;
    hasher.update(buffer.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return FileDigest{path, hasher.bytes(), hasher.digest()};
}

Result<std::vector<FileDigest>> hash_files(const std::vector<std::string>& paths, unsigned threads) {
  std::vector<std::optional<Result<FileDigest>>> results(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) results[i] = hash_file(paths[i]);
  };
  unsigned n = pool_size(threads, paths.size());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<FileDigest> out;
  out.reserve(paths.size());
  for (auto& r : results) {
    if (!r->ok()) return r->error();
    out.push_back(std::move(r->value()));
  }
  return out;
}

ContentHash tree_root(const std::vector<FileDigest>& sorted_files) {
  ContentHasher hasher;
  std::string line;
  for (const auto& f : sorted_files) {
    line = f.hash.hex();
    line += ' ';
    line += std::to_string(f.bytes);
    line += ' ';
    line += f.path;
    line += '\n';
    hasher.update(line);
  }
  return hasher.digest();
}

Result<TreeDigest> hash_tree(const std::vector<std::string>& paths, const std::string& base, unsigned threads) {
  // Collect every regular file first (folders walked without following folder symlinks, so a link cycle cannot
  // loop), then hash them all on the pool.
  std::vector<std::string> files;
  for (const auto& root : paths) {
    std::error_code ec;
    auto status = fs::status(root, ec);
    if (ec || !fs::exists(status)) {
      return Error{ErrorCode::not_found, "no such file or folder", root};
    }
    if (!fs::is_directory(status)) {
      files.push_back(root);
      continue;
    }
    fs::recursive_directory_iterator it(root, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_regular_file(type_ec)) files.push_back(generic(it->path()));
    }
    if (ec) return Error{ErrorCode::unreadable, "cannot list folder: " + ec.message(), root};
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());

  auto hashed = hash_files(files, threads);
  if (!hashed.ok()) return hashed.error();
  TreeDigest tree;
  tree.files = std::move(hashed.value());
  fs::path base_path = base.empty() ? fs::path() : fs::absolute(base).lexically_normal();
  for (auto& f : tree.files) {
    if (!base.empty()) {
      fs::path rel = fs::absolute(f.path).lexically_normal().lexically_relative(base_path);
      if (!rel.empty()) f.path = generic(rel);
    } else {
      f.path = generic(fs::path(f.path).lexically_normal());
    }
    tree.bytes += f.bytes;
  }
  std::sort(tree.files.begin(), tree.files.end(),
            [](const FileDigest& x, const FileDigest& y) { return x.path < y.path; });
  tree.root = tree_root(tree.files);
  return tree;
}

Json file_digest_json(const FileDigest& file) {
  Json j;
  j["path"] = file.path;
  j["bytes"] = file.bytes;
  j["hash"] = file.hash.text();
  return j;
}

Json tree_digest_json(const TreeDigest& tree) {
  Json j;
  Json::Array files;
  for (const auto& f : tree.files) files.push_back(file_digest_json(f));
  j["files"] = Json(std::move(files));
  j["root"] = tree.root.text();
  j["bytes"] = tree.bytes;
  return j;
}

}  // namespace rldk::provenance
