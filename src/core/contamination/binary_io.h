// Little-endian fields for the two binary formats of this module, the index file and the partial result a cluster
// task sends back. The reader checks every length against what is left before touching memory: both inputs come from
// disk or the network and may be truncated or hostile (fuzz/fuzz_contamination_index.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rldk::contamination {

class ByteWriter {
 public:
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  std::string& bytes() { return out_; }

 private:
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }  // the engine is little-endian
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  bool u32(uint32_t& v) { return raw(&v, 4); }
  bool u64(uint64_t& v) { return raw(&v, 8); }
  bool f64(double& v) { return raw(&v, 8); }
  bool str(std::string& s) {
    uint64_t n = 0;
    if (!u64(n) || n > in_.size() - pos_) return false;
    s.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  // A count of records of `record_bytes` each that must still fit in the input (refuses absurd counts early).
  bool count(uint64_t& n, size_t record_bytes) { return u64(n) && n <= (in_.size() - pos_) / record_bytes; }
  size_t left() const { return in_.size() - pos_; }

 private:
  bool raw(void* p, size_t n) {
    if (in_.size() - pos_ < n) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace rldk::contamination
