// The dtype table: names as safetensors spells them, element widths, and which dtypes rldk decodes.
#include <array>

#include "checkpoint/readers.h"

namespace rldk::ckpt {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  unsigned bits;
};

constexpr std::array<DTypeInfo, 22> DTYPES = {{
    {DType::F64, "F64", 64},          {DType::F32, "F32", 32},
    {DType::F16, "F16", 16},          {DType::BF16, "BF16", 16},
    {DType::F8_E4M3, "F8_E4M3", 8},   {DType::F8_E5M2, "F8_E5M2", 8},
    {DType::I64, "I64", 64},          {DType::I32, "I32", 32},
    {DType::I16, "I16", 16},          {DType::I8, "I8", 8},
    {DType::U64, "U64", 64},          {DType::U32, "U32", 32},
    {DType::U16, "U16", 16},          {DType::U8, "U8", 8},
    {DType::BOOL, "BOOL", 8},         {DType::C64, "C64", 64},
    {DType::F8_E8M0, "F8_E8M0", 8},   {DType::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {DType::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8}, {DType::F6_E2M3, "F6_E2M3", 6},
    {DType::F6_E3M2, "F6_E3M2", 6},   {DType::F4, "F4", 4},
}};

}  // namespace

const char* dtype_name(DType dtype) { return DTYPES[static_cast<size_t>(dtype)].name; }
unsigned dtype_bits(DType dtype) { return DTYPES[static_cast<size_t>(dtype)].bits; }
bool dtype_is_float(DType dtype) { return dtype <= DType::F8_E5M2; }
bool dtype_is_integer(DType dtype) { return dtype >= DType::I64 && dtype <= DType::BOOL; }

bool dtype_from_name(std::string_view name, DType& dtype) {
  for (const auto& d : DTYPES) {
    if (name == d.name) {
      dtype = d.dtype;
      return true;
    }
  }
  return false;
}

uint64_t Checkpoint::total_bytes() const {
  uint64_t total = 0;
  for (const auto& t : tensors) total += t.nbytes;
  return total;
}

}  // namespace rldk::ckpt
