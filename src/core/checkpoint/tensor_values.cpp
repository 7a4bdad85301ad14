#include "checkpoint/tensor_values.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace rldk::ckpt {
namespace {

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; compiles to a plain load
  return v;
}

// f16 -> f32 without branches on the common path: shift exponent+mantissa into place and rescale by 2^112, which
// is exact for normals and turns f16 subnormals into f32 normals; anything that lands at or above 2^16 was Inf/NaN.
inline float half_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h & 0x7fffu) << 13;
  float f = std::bit_cast<float>(bits) * 0x1p112f;
  uint32_t out = std::bit_cast<uint32_t>(f);
  if (f >= 65536.0f) out |= 0x7f800000u;
  out |= static_cast<uint32_t>(h & 0x8000u) << 16;
  return std::bit_cast<float>(out);
}

inline float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

double e4m3(uint8_t b) {
  // OCP FP8 E4M3 ("fn"): bias 7, no infinities, S.1111.111 is NaN.
  int sign = (b & 0x80) ? -1 : 1;
  int exp = (b >> 3) & 0xF, mant = b & 0x7;
  if (exp == 0xF && mant == 0x7) return std::numeric_limits<double>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(mant / 8.0, -6);
  return sign * std::ldexp(1.0 + mant / 8.0, exp - 7);
}

double e5m2(uint8_t b) {
  // FP8 E5M2: IEEE-style, bias 15, with infinities and NaNs.
  int sign = (b & 0x80) ? -1 : 1;
  int exp = (b >> 2) & 0x1F, mant = b & 0x3;
  if (exp == 0x1F) return mant == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(mant / 4.0, -14);
  return sign * std::ldexp(1.0 + mant / 4.0, exp - 15);
}

struct F8Tables {
  std::array<double, 256> e4m3{}, e5m2{};
  F8Tables() {
    for (int i = 0; i < 256; ++i) {
      e4m3[static_cast<size_t>(i)] = ckpt::e4m3(static_cast<uint8_t>(i));
      e5m2[static_cast<size_t>(i)] = ckpt::e5m2(static_cast<uint8_t>(i));
    }
  }
};
const F8Tables& f8_tables() {
  static const F8Tables tables;
  return tables;
}

}  // namespace

double half_to_double(uint16_t bits) { return half_to_float(bits); }
double bf16_to_double(uint16_t bits) { return bf16_to_float(bits); }
double f8_e4m3_to_double(uint8_t bits) { return f8_tables().e4m3[bits]; }
double f8_e5m2_to_double(uint8_t bits) { return f8_tables().e5m2[bits]; }

void decode_to_double(DType dtype, const uint8_t* p, size_t n, double* out) {
  switch (dtype) {
    case DType::F64: for (size_t i = 0; i < n; ++i) out[i] = load<double>(p + 8 * i); break;
    case DType::F32: for (size_t i = 0; i < n; ++i) out[i] = load<float>(p + 4 * i); break;
    case DType::F16: for (size_t i = 0; i < n; ++i) out[i] = half_to_float(load<uint16_t>(p + 2 * i)); break;
    case DType::BF16: for (size_t i = 0; i < n; ++i) out[i] = bf16_to_float(load<uint16_t>(p + 2 * i)); break;
    case DType::F8_E4M3: {
      const auto& t = f8_tables().e4m3;
      for (size_t i = 0; i < n; ++i) out[i] = t[p[i]];
      break;
    }
    case DType::F8_E5M2: {
      const auto& t = f8_tables().e5m2;
      for (size_t i = 0; i < n; ++i) out[i] = t[p[i]];
      break;
    }
    case DType::I64: for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(load<int64_t>(p + 8 * i)); break;
    case DType::I32: for (size_t i = 0; i < n; ++i) out[i] = load<int32_t>(p + 4 * i); break;
    case DType::I16: for (size_t i = 0; i < n; ++i) out[i] = load<int16_t>(p + 2 * i); break;
    case DType::I8: for (size_t i = 0; i < n; ++i) out[i] = static_cast<int8_t>(p[i]); break;
    case DType::U64: for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(load<uint64_t>(p + 8 * i)); break;
    case DType::U32: for (size_t i = 0; i < n; ++i) out[i] = load<uint32_t>(p + 4 * i); break;
    case DType::U16: for (size_t i = 0; i < n; ++i) out[i] = load<uint16_t>(p + 2 * i); break;
    case DType::U8: for (size_t i = 0; i < n; ++i) out[i] = p[i]; break;
    case DType::BOOL: for (size_t i = 0; i < n; ++i) out[i] = p[i] != 0 ? 1.0 : 0.0; break;
    default: for (size_t i = 0; i < n; ++i) out[i] = std::numeric_limits<double>::quiet_NaN(); break;
  }
}

void decode_to_int(DType dtype, const uint8_t* p, size_t n, Int128* out) {
  switch (dtype) {
    case DType::I64: for (size_t i = 0; i < n; ++i) out[i] = load<int64_t>(p + 8 * i); break;
    case DType::I32: for (size_t i = 0; i < n; ++i) out[i] = load<int32_t>(p + 4 * i); break;
    case DType::I16: for (size_t i = 0; i < n; ++i) out[i] = load<int16_t>(p + 2 * i); break;
    case DType::I8: for (size_t i = 0; i < n; ++i) out[i] = static_cast<int8_t>(p[i]); break;
    case DType::U64: for (size_t i = 0; i < n; ++i) out[i] = load<uint64_t>(p + 8 * i); break;
    case DType::U32: for (size_t i = 0; i < n; ++i) out[i] = load<uint32_t>(p + 4 * i); break;
    case DType::U16: for (size_t i = 0; i < n; ++i) out[i] = load<uint16_t>(p + 2 * i); break;
    case DType::U8: for (size_t i = 0; i < n; ++i) out[i] = p[i]; break;
    case DType::BOOL: for (size_t i = 0; i < n; ++i) out[i] = p[i] != 0 ? 1 : 0; break;
    default: for (size_t i = 0; i < n; ++i) out[i] = 0; break;
  }
}

}  // namespace rldk::ckpt
