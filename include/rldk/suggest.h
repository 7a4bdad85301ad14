// "Did you mean": the known name closest to a misspelt one (rule expressions, command words, options).
#pragma once

#include <span>
#include <string_view>

namespace rldk {

// The candidate closest to `word` by edit distance when it is close enough to be a likely typo (at most
// `max_distance` edits, and fewer edits than the word has characters); empty otherwise.
std::string_view closest_name(std::string_view word, std::span<const std::string_view> candidates,
                              size_t max_distance = 2);

}  // namespace rldk
