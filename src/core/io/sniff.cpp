#include <algorithm>
#include <cctype>

#include "io/line_format.h"

namespace rldk::io {
namespace {

std::string lower_extension(std::string_view path) {
  std::string name(path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view z : {".gz", ".zst", ".zstd"}) {
    if (name.size() > z.size() && name.compare(name.size() - z.size(), z.size(), z) == 0) {
      name.resize(name.size() - z.size());
      break;
    }
  }
  size_t dot = name.find_last_of('.');
  return dot == std::string::npos ? "" : name.substr(dot);
}

// A header row: at least two cells, each a bare metric-like name (no spaces, no '=', not a number).
bool looks_like_csv_header(std::string_view line, char delimiter) {
  size_t cells = 0;
  size_t start = 0;
  for (;;) {
    size_t end = line.find(delimiter, start);
    std::string_view cell = line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!cell.empty() && cell.front() == '"' && cell.back() == '"' && cell.size() >= 2) {
      cell = cell.substr(1, cell.size() - 2);
    }
    if (cell.empty()) return false;
    char first = cell.front();
    if (!(std::isalpha(static_cast<unsigned char>(first)) || first == '_')) return false;
    for (char c : cell) {
      if (c == ' ' || c == '=' || c == '{' || c == '\'' || static_cast<unsigned char>(c) < 0x20) return false;
    }
    ++cells;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return cells >= 2;
}

}  // namespace

Format sniff_format(std::string_view first_line, std::string_view path) {
  std::string ext = lower_extension(path);
  if (ext == ".csv") return Format::csv;
  if (ext == ".tsv") return Format::tsv;
  std::string_view line = first_line;
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) return Format::unknown;
  if (line.front() == '[') {
    // A JSON array, not a log prefix such as "[2024-05-01 12:00:00,000] [INFO]" (DeepSpeed, Hydra).
    std::string_view rest = line.substr(1);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    if (rest.empty() || rest.front() == '{' || rest.front() == '[' || rest.front() == ']') return Format::json_document;
  }
  if (line.front() == '{') {
    if (line.find("\"log_history\"") != std::string_view::npos) return Format::json_document;
    if (line.size() >= 2 && line[1] == '\'') return Format::console;  // an HF/TRL dict repr
    if (line.size() >= 2 && line[1] == '"') return Format::jsonl;
    if (line.size() == 1) return Format::json_document;  // a pretty-printed document
    return line.back() == '}' ? Format::console : Format::json_document;
  }
  char delimiter = line.find('\t') != std::string_view::npos ? '\t' : ',';
  if (looks_like_csv_header(line, delimiter)) return delimiter == '\t' ? Format::tsv : Format::csv;
  return Format::console;
}

}  // namespace rldk::io
