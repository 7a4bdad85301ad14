// CRC-32C (Castagnoli), the checksum of TFRecord framing (TensorBoard event files), and its "masked" form.
//
// Written here rather than taken from a library: Debian ships no small CRC-32C library (zlib only has CRC-32/IEEE,
// which is not the same polynomial), and a table-driven CRC is a few lines whose correctness the unit tests pin to
// the published check value.
#pragma once

#include <cstdint>
#include <string_view>

namespace rldk::io {

// CRC-32C of `bytes` (reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF).
uint32_t crc32c(std::string_view bytes);
// TFRecord stores CRCs masked, so that a CRC over data that itself contains CRCs stays well distributed:
// rotate right by 15 bits, then add a constant.
uint32_t masked_crc32c(std::string_view bytes);

}  // namespace rldk::io
