// Decoding tensor elements to the types they are compared in: every float dtype to double (bf16 and f16 by bit
// manipulation, f8 by table), integers to exact 128-bit values so that int64/uint64 differences are never rounded.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rldk/checkpoint.h"

namespace rldk::ckpt {

// 128-bit integers (a GCC/Clang extension): wide enough for any difference of two int64/uint64 values.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// Decodes `count` elements of `dtype` starting at `p` (any alignment) into `out`. Float and integer dtypes only.
void decode_to_double(DType dtype, const uint8_t* p, size_t count, double* out);
// Integer and bool dtypes only.
void decode_to_int(DType dtype, const uint8_t* p, size_t count, Int128* out);

// One element conversions, exposed for tests.
double half_to_double(uint16_t bits);
double bf16_to_double(uint16_t bits);
double f8_e4m3_to_double(uint8_t bits);
double f8_e5m2_to_double(uint8_t bits);

}  // namespace rldk::ckpt
