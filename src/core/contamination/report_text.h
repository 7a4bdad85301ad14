// Shared wording of the Markdown and HTML cards: the headline, a training place as "file:row (field)", numbers.
#pragma once

#include <cstdio>
#include <string>

#include "rldk/contamination.h"

namespace rldk::contamination {

inline std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

inline std::string train_place(const Report& r, const DocRef& d) {
  std::string file = d.file < r.train.files.size() ? r.train.files[d.file] : "?";
  std::string field = d.field < r.train.fields.size() ? r.train.fields[d.field] : "?";
  return file + ":" + std::to_string(d.row + 1) + " (" + field + ")";
}

inline std::string headline(const Report& r) {
  size_t items = 0, full = 0, partial = 0;
  for (const auto& s : r.summaries) {
    items += s.items;
    full += s.full;
    partial += s.partial;
  }
  if (full + partial == 0) {
    return "No eval item found in the training data (" + std::to_string(items) + " items checked).";
  }
  return std::to_string(full + partial) + " of " + std::to_string(items) + " eval items are contaminated: " +
         std::to_string(full) + " fully, " + std::to_string(partial) + " partially.";
}


}  // namespace rldk::contamination
