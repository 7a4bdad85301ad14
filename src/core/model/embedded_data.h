// Files from data/ compiled into the library (see cmake/embed_data.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace rldk {

struct EmbeddedFile {
  std::string_view path;  // relative to data/, e.g. "metrics.yaml"
  std::string_view text;
};

const std::vector<EmbeddedFile>& embedded_files();
// The text of data/<path>; empty when there is no such file.
std::string_view embedded_file(std::string_view path);

}  // namespace rldk
