#include <algorithm>
#include <cctype>

#include "io/line_format.h"
#include "io/record_format.h"
#include "io/tfrecord_framing.h"

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

bool is_record_format(Format format) { return format == Format::tensorboard || format == Format::wandb; }

namespace {
std::string_view file_name(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}
}  // namespace

bool text_so_far(std::string_view head, std::string_view path) {
  std::string_view name = file_name(path);
  if (name.find("tfevents") != std::string_view::npos || (name.size() > 6 && name.substr(name.size() - 6) == ".wandb")) {
    return false;
  }
  if (std::string_view(":W&B").substr(0, std::min<size_t>(head.size(), 4)) == head.substr(0, 4)) return false;
  // A complete line of text: a TFRecord header has NUL bytes in its length.
  if (head.find('\n') != std::string_view::npos && head.find('\0') == std::string_view::npos) return true;
  // A length no TFRecord header can have (above TfRecordFramer::MAX_RECORD_BYTES): bytes 4..7 not zero, or byte 3
  // above 0x10. Decides early for binary data that is no event file either.
  if (head.size() > 3 && static_cast<uint8_t>(head[3]) > 0x10) return true;
  for (size_t i = 4; i < head.size() && i < 8; ++i) {
    if (head[i] != '\0') return true;
  }
  return false;
}

Format sniff_binary_format(std::string_view head, std::string_view path) {
  if (head.substr(0, 4) == ":W&B") return Format::wandb;
  std::string_view name = file_name(path);
  // Event files are named events.out.tfevents.<time>.<host>...; the name alone is enough, so that an event file
  // whose first record is damaged is still read (and its damage reported) instead of taken for text.
  if (name.find("tfevents") != std::string_view::npos) return Format::tensorboard;
  if (name.size() > 6 && name.substr(name.size() - 6) == ".wandb") return Format::wandb;  // a damaged header too
  if (TfRecordFramer::valid_header(head)) return Format::tensorboard;
  return Format::unknown;
}

Format sniff_format(std::string_view first_line, std::string_view path) {
  std::string ext = lower_extension(path);
  if (ext == ".csv") return Format::csv;
  if (ext == ".tsv") return Format::tsv;
  // A notebook is JSON, but what it holds for rldk is its outputs' console text (read by the console format, which
  // unwraps it); its first line alone ("{") would read as a JSON document.
  if (ext == ".ipynb") return Format::console;
  std::string_view line = first_line;
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) return Format::unknown;
  if (line.front() == '[') {
    // A JSON array, not a log prefix such as "[2024-05-01 12:00:00,000] [INFO]" (DeepSpeed, Hydra).
    std::string_view rest = line.substr(1);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    // Kaggle's notebook output log: a JSON array of {"stream_name", "time", "data"} records, one per line, whose data
    // is console text (read by the console format, which unwraps it).
    if (rest.substr(0, 14) == "{\"stream_name\"") return Format::console;
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
