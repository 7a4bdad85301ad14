// The protocol-buffer wire reader: each wire type, and malformed input ends the message without reading past it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/protobuf_wire.h"

namespace {

using rldk::io::pb::Field;
using rldk::io::pb::Reader;
using rldk::io::pb::WireType;

std::string varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string key(uint32_t number, WireType type) { return varint((uint64_t{number} << 3) | static_cast<uint8_t>(type)); }

TEST(ProtobufWire, ReadsEveryWireType) {
  double d = -2.5;
  float f = 0.125f;
  std::string msg = key(1, WireType::varint) + varint(300) + key(2, WireType::fixed64) + std::string(8, '\0') +
                    key(3, WireType::bytes) + varint(5) + "hello" + key(2000, WireType::fixed32) + std::string(4, '\0');
  std::memcpy(&msg[key(1, WireType::varint).size() + 2 + 1], &d, 8);
  std::memcpy(&msg[msg.size() - 4], &f, 4);
  Reader r(msg);
  Field field;
  std::vector<uint32_t> numbers;
  ASSERT_TRUE(r.next(field));
  EXPECT_EQ(field.number, 1u);
  EXPECT_EQ(field.varint, 300u);
  ASSERT_TRUE(r.next(field));
  EXPECT_EQ(field.type, WireType::fixed64);
  EXPECT_EQ(field.as_double(), -2.5);
  ASSERT_TRUE(r.next(field));
  EXPECT_EQ(field.bytes, "hello");
  ASSERT_TRUE(r.next(field));
  EXPECT_EQ(field.number, 2000u);
  EXPECT_EQ(field.as_float(), 0.125f);
  EXPECT_FALSE(r.next(field));
  EXPECT_TRUE(r.ok());
}

TEST(ProtobufWire, NegativeInt64VarintsRoundTrip) {
  std::string msg = key(2, WireType::varint) + varint(static_cast<uint64_t>(int64_t{-7}));
  Reader r(msg);
  Field field;
  ASSERT_TRUE(r.next(field));
  EXPECT_EQ(field.as_int64(), -7);
}

TEST(ProtobufWire, MalformedMessagesEndWithoutOverreading) {
  const std::vector<std::string> bad = {
      key(3, WireType::bytes) + varint(10) + "short",       // length past the end
      key(1, WireType::varint) + "\x80\x80",                // truncated varint
      key(1, WireType::fixed64) + "1234",                   // truncated fixed64
      key(1, WireType::fixed32) + "12",                     // truncated fixed32
      key(1, WireType::start_group),                        // groups are not supported
      std::string("\x07", 1),                               // wire type 7 does not exist
      std::string("\x00\x01", 2),                           // field number 0
      key(1, WireType::varint) + std::string(11, '\xFF'),   // varint longer than 10 bytes
  };
  for (const auto& msg : bad) {
    Reader r(msg);
    Field field;
    while (r.next(field)) {
    }
    EXPECT_FALSE(r.ok()) << "message of " << msg.size() << " bytes";
  }
}

TEST(ProtobufWire, EmptyMessageIsValid) {
  Reader r("");
  Field field;
  EXPECT_FALSE(r.next(field));
  EXPECT_TRUE(r.ok());
}

}  // namespace
