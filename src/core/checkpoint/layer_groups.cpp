// Layer groups from tensor names, by the conventions of the common model families: transformer blocks are numbered
// under layers.N (Llama, Mistral, Qwen, OPT), h.N (GPT-2), blocks.N, layer.N (BERT); embeddings carry "embed" or the
// GPT-2 names wte/wpe; heads are the final projections of policy, value and reward models.
#include <string>
#include <vector>

#include "rldk/checkpoint.h"

namespace rldk::ckpt {
namespace {

std::vector<std::string_view> split_dots(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      parts.push_back(name.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

GroupKind layer_group(std::string_view name, int64_t& block_index, std::string* group_name) {
  block_index = -1;
  auto parts = split_dots(name);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const auto& p = parts[i];
    if ((p == "layers" || p == "layer" || p == "h" || p == "blocks" || p == "block") && all_digits(parts[i + 1])) {
      block_index = std::stoll(std::string(parts[i + 1]));
      if (group_name != nullptr) *group_name = std::string(p) + "." + std::to_string(block_index);
      return GroupKind::block;
    }
  }
  for (const auto& p : parts) {
    if (p == "lm_head" || p == "value_head" || p == "v_head" || p == "score" || p == "classifier" ||
        p == "reward_head" || p == "summary") {
      if (group_name != nullptr) *group_name = "head";
      return GroupKind::head;
    }
  }
  for (const auto& p : parts) {
    if (p.find("embed") != std::string_view::npos || p == "wte" || p == "wpe") {
      if (group_name != nullptr) *group_name = "embedding";
      return GroupKind::embedding;
    }
  }
  if (group_name != nullptr) *group_name = "other";
  return GroupKind::other;
}

}  // namespace rldk::ckpt
