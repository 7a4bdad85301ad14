// The checkpoint readers, each over bytes already in memory (a mapping, or a fuzzer's buffer): they fill TensorViews
// that point into those bytes. checkpoint_source.cpp decides which reader a path needs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/checkpoint.h"

namespace rldk::ckpt {

// safetensors' own limit: a larger header is refused before anything is parsed.
inline constexpr uint64_t SAFETENSORS_MAX_HEADER = 100'000'000;

// Dtype from its safetensors spelling ("F32", "BF16", ...); false for unknown names.
bool dtype_from_name(std::string_view name, DType& dtype);

// A whole .safetensors file. Validates as the format specifies: little-endian u64 header size <= 100 MB and within the
// file, JSON that starts with '{' (trailing spaces allowed), no duplicate keys, known dtypes, END - BEGIN ==
// numel * element size (overflow-checked), offsets contiguous from 0 with no holes or overlaps and exactly covering
// the data, __metadata__ a string -> string map. Errors are ErrorCode::unrecognized with context = file_name.
Status parse_safetensors(std::string_view file, const std::string& file_name, std::vector<TensorView>& tensors,
                         std::map<std::string, std::string>& metadata);

// torch.save's zip format (data.pkl + data/<key> storages). Stored entries are viewed in place; a deflated data.pkl
// is inflated (it is small). `keep` receives any bytes the views point into that are not part of `file`.
Status parse_torch_zip(std::string_view file, const std::string& file_name, std::vector<TensorView>& tensors,
                       std::vector<std::shared_ptr<const void>>& keep);

// True when `file` starts like a pre-1.6 torch.save file (a pickle of torch's magic number).
bool is_legacy_torch_file(std::string_view file);

}  // namespace rldk::ckpt
