// Options spelled as words (the CLI's flags and Python's keyword arguments), parsed in one place.
#include <sstream>

#include "rldk/contamination.h"

namespace rldk::contamination {

Result<Methods> parse_methods(const std::vector<std::string>& names) {
  Methods m{false, false, false};
  for (const auto& list : names) {
    std::stringstream ss(list);
    std::string name;
    while (std::getline(ss, name, ',')) {
      if (name == "all") {
        m = Methods{};
      } else if (name == "ngram") {
        m.ngram = true;
      } else if (name == "llama2") {
        m.llama2 = true;
      } else if (name == "minhash") {
        m.minhash = true;
      } else {
        return Error{ErrorCode::invalid_argument, "methods are ngram, llama2, minhash or all, got '" + name + "'", ""};
      }
    }
  }
  if (!m.ngram && !m.llama2 && !m.minhash) return Error{ErrorCode::invalid_argument, "no method chosen", ""};
  return m;
}

Result<NormalizeOptions> parse_normalize(bool lowercase, std::string_view punctuation, std::string_view digits) {
  NormalizeOptions n;
  n.lowercase = lowercase;
  if (punctuation != "strip" && punctuation != "keep") {
    return Error{ErrorCode::invalid_argument, "punctuation is strip or keep, got '" + std::string(punctuation) + "'", ""};
  }
  if (digits != "keep" && digits != "mask") {
    return Error{ErrorCode::invalid_argument, "digits are keep or mask, got '" + std::string(digits) + "'", ""};
  }
  n.punctuation = punctuation == "keep" ? Punctuation::keep : Punctuation::strip;
  n.digits = digits == "mask" ? Digits::mask : Digits::keep;
  return n;
}

Result<MinHashScheme> parse_scheme(std::string_view name) {
  if (name == "legacy") return MinHashScheme::legacy;
  if (name == "affine32") return MinHashScheme::affine32;
  return Error{ErrorCode::invalid_argument, "MinHash schemes are legacy or affine32, got '" + std::string(name) + "'", ""};
}

}  // namespace rldk::contamination
