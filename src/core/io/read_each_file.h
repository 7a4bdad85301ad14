// Reads each file of a source into its own builder sink, so that every run (or summary) carries the diagnostics of
// the file it came from. Files in a directory that hold no run log are reported on the first item and skipped.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "io/source_files.h"
#include "rldk/reader.h"

namespace rldk::io {

// A builder that takes the read options (RunBuilder: which per-point details to keep) gets them.
template <class Builder>
Builder make_builder(const ReadOptions& options) {
  if constexpr (std::is_constructible_v<Builder, const ReadOptions&>) {
    return Builder(options);
  } else {
    return Builder();
  }
}

template <class Item, class Builder>
Result<std::vector<Item>> read_each_file(const std::string& path, const ReadOptions& options) {
  auto files = list_source_files(path);
  if (!files.ok()) return files.error();
  bool directory = files.value().size() != 1 || files.value().front() != path;
  std::vector<Item> out;
  Diagnostics skipped;
  for (const auto& file : files.value()) {
    Builder builder = make_builder<Builder>(options);
    Diagnostics diagnostics;
    Status read = read_source(file, options, builder, diagnostics);
    if (!read.ok()) {
      if (!directory) return read.error();
      skipped.add(Diagnostic{"skipped_file", file, 0, "skipped: " + read.error().message});
      continue;
    }
    for (Item& item : builder.take()) {
      item.diagnostics = diagnostics;
      out.push_back(std::move(item));
    }
  }
  if (out.empty()) {
    return Error{ErrorCode::unrecognized,
                 "no metrics found in any of the " + std::to_string(files.value().size()) +
                     " files under this directory",
                 path};
  }
  out.front().diagnostics.merge(skipped);
  return out;
}

}  // namespace rldk::io
