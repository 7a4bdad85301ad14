#include "io/crc32c.h"

#include <array>
#include <cstring>

namespace rldk::io {
namespace {

constexpr uint32_t POLYNOMIAL = 0x82F63B78u;
constexpr uint32_t MASK_DELTA = 0xA282EAD8u;

// Slicing-by-8 tables: table[k][b] is the CRC contribution of byte b followed by k zero bytes. Eight bytes per step
// keep event-file checking well above disk speed without special CPU instructions.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1u) ? POLYNOMIAL : 0u);
    t[0][b] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  }
  return t;
}

constexpr Tables TABLES = make_tables();

uint32_t load_le32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  uint32_t crc = 0xFFFFFFFFu;
  while (n >= 8) {
    uint32_t lo = load_le32(p) ^ crc;
    uint32_t hi = load_le32(p + 4);
    crc = TABLES[7][lo & 0xFF] ^ TABLES[6][(lo >> 8) & 0xFF] ^ TABLES[5][(lo >> 16) & 0xFF] ^ TABLES[4][lo >> 24] ^
          TABLES[3][hi & 0xFF] ^ TABLES[2][(hi >> 8) & 0xFF] ^ TABLES[1][(hi >> 16) & 0xFF] ^ TABLES[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ TABLES[0][(crc ^ *p++) & 0xFFu];
  return crc ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + MASK_DELTA;
}

}  // namespace rldk::io
