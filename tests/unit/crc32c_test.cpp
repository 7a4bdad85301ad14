// CRC-32C against published check values, and the TFRecord mask.
#include <gtest/gtest.h>

#include <string>

#include "io/crc32c.h"

namespace {

TEST(Crc32c, MatchesTheStandardCheckValue) {
  // The catalogue check value of CRC-32C: the CRC of the ASCII digits 1..9.
  EXPECT_EQ(rldk::io::crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(rldk::io::crc32c(""), 0u);
}

TEST(Crc32c, MatchesIscsiTestVectors) {
  // RFC 3720 (iSCSI) appendix B.4: 32 bytes of zeros, of 0xFF, and ascending 0..31.
  EXPECT_EQ(rldk::io::crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(rldk::io::crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(rldk::io::crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32c, EveryLengthAgreesWithTheBytewiseDefinition) {
  // The slicing-by-8 loop and its byte tail must agree with the plain bitwise definition at every alignment.
  auto bitwise = [](const std::string& s) {
    uint32_t crc = 0xFFFFFFFFu;
    for (unsigned char c : s) {
      crc ^= c;
      for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
    }
    return crc ^ 0xFFFFFFFFu;
  };
  std::string data;
  for (int n = 0; n < 100; ++n) {
    EXPECT_EQ(rldk::io::crc32c(data), bitwise(data)) << "length " << n;
    data.push_back(static_cast<char>(n * 37 + 11));
  }
}

TEST(Crc32c, MaskRotatesAndAddsTheTfRecordConstant) {
  uint32_t crc = rldk::io::crc32c("123456789");
  uint32_t expected = ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
  EXPECT_EQ(rldk::io::masked_crc32c("123456789"), expected);
  // The header of an 8-byte-length record whose length is zero, as TensorFlow writes it.
  EXPECT_NE(rldk::io::masked_crc32c(std::string(8, '\0')), rldk::io::crc32c(std::string(8, '\0')));
}

}  // namespace
