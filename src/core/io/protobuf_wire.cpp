#include "io/protobuf_wire.h"

#include <bit>

namespace rldk::io::pb {

// Fixed-width fields (and TensorBoard's raw tensor bytes) are little-endian and are copied as they are.
static_assert(std::endian::native == std::endian::little, "the binary readers assume a little-endian host");

bool Reader::read_varint(std::string_view bytes, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
    auto byte = static_cast<uint8_t>(bytes[pos++]);
    value |= uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80u) == 0) return true;
  }
  return false;
}

bool Reader::next(Field& field) {
  if (!ok_ || pos_ >= data_.size()) return false;
  uint64_t key = 0;
  if (!read_varint(data_, pos_, key)) return fail();
  field.number = static_cast<uint32_t>(key >> 3);
  field.type = static_cast<WireType>(key & 7u);
  field.varint = 0;
  field.bytes = {};
  if (field.number == 0 || (key >> 3) > 0x1FFFFFFFu) return fail();
  switch (field.type) {
    case WireType::varint:
      if (!read_varint(data_, pos_, field.varint)) return fail();
      return true;
    case WireType::fixed64:
      if (data_.size() - pos_ < 8) return fail();
      std::memcpy(&field.varint, data_.data() + pos_, 8);
      pos_ += 8;
      return true;
    case WireType::fixed32: {
      if (data_.size() - pos_ < 4) return fail();
      uint32_t bits;
      std::memcpy(&bits, data_.data() + pos_, 4);
      field.varint = bits;
      pos_ += 4;
      return true;
    }
    case WireType::bytes: {
      uint64_t length = 0;
      if (!read_varint(data_, pos_, length) || length > data_.size() - pos_) return fail();
      field.bytes = data_.substr(pos_, static_cast<size_t>(length));
      pos_ += static_cast<size_t>(length);
      return true;
    }
    default:
      // Groups are deprecated and absent from the schemas read here; anything else is corruption.
      return fail();
  }
}

}  // namespace rldk::io::pb
