// A minimal reader of the protocol-buffer wire format, for the few fields rldk needs from TensorBoard events and
// W&B records.
//
// Why not libprotobuf: the readers need perhaps a dozen fields of three schemas; generated code would pin rldk to
// copies of TensorFlow's and W&B's .proto files and to one protobuf version, for what is a ~100-line decoder of
// varints and length prefixes. Every read is bounds-checked: malformed input ends the message (ok() turns false),
// it never reads past the buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace rldk::io::pb {

enum class WireType : uint8_t { varint = 0, fixed64 = 1, bytes = 2, start_group = 3, end_group = 4, fixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType type = WireType::varint;
  uint64_t varint = 0;       // varint, fixed64 and fixed32 values (raw bits for the fixed ones)
  std::string_view bytes;    // length-delimited values

  double as_double() const {
    double d;
    std::memcpy(&d, &varint, sizeof d);
    return d;
  }
  float as_float() const {
    uint32_t bits = static_cast<uint32_t>(varint);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  int64_t as_int64() const { return static_cast<int64_t>(varint); }
};

// Iterates over the fields of one message. Usage: `Reader r(bytes); Field f; while (r.next(f)) {...}` then
// `r.ok()` tells whether the message ended cleanly or was malformed (truncated varint, length past the end,
// unknown wire type).
class Reader {
 public:
  explicit Reader(std::string_view message) : data_(message) {}
  bool next(Field& field);
  bool ok() const { return ok_; }

  // Reads one varint from `bytes` at `pos`, advancing it; false when truncated or longer than 10 bytes.
  static bool read_varint(std::string_view bytes, size_t& pos, uint64_t& value);

 private:
  bool fail() {
    ok_ = false;
    pos_ = data_.size();
    return false;
  }
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace rldk::io::pb
