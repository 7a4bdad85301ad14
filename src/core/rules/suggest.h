// "Did you mean" for misspelt names in rule expressions.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rldk::rules {

// The candidate closest to `word` by edit distance when it is close enough to be a likely typo (at most
// MAX_SUGGESTION_DISTANCE edits, and fewer edits than the word has characters); empty otherwise.
std::string_view closest_name(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace rldk::rules
