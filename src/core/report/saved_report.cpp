// Recognising a report rldk saved (a JSON document with an "rldk.*" schema), so a command given one where it
// expects a run can say so instead of reading the report as metrics.
#include <simdjson.h>

#include <filesystem>

#include "rldk/report.h"

namespace rldk {

std::string saved_report_schema(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  constexpr uintmax_t LARGEST_REPORT = uintmax_t{256} << 20;  // reports are small; a larger file is a run's data
  if (fs::path(path).extension() != ".json" || !fs::is_regular_file(path, ec) || fs::file_size(path, ec) > LARGEST_REPORT) {
    return "";
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view schema;
  if (parser.load(path).get(doc) != simdjson::SUCCESS || doc["schema"].get_string().get(schema) != simdjson::SUCCESS ||
      !schema.starts_with("rldk.")) {
    return "";
  }
  return std::string(schema);
}

}  // namespace rldk
