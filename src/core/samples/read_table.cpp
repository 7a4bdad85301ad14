// read_table(): a file or a folder of sample files, each sniffed by content (Parquet's PAR1 magic, else JSONL),
// into a CellSink.
#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>

#include "samples/cell_sink.h"
#include "samples/jsonl_samples.h"
#include "samples/parquet_samples.h"

namespace rldk::samples {
namespace fs = std::filesystem;
namespace {

bool is_parquet(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::string_view(magic, 4) == "PAR1";
}

bool sample_file_name(const fs::path& p) {
  std::string name = p.filename().string();
  for (const char* ext : {".parquet", ".jsonl", ".jsonl.gz", ".jsonl.zst", ".json"}) {
    std::string e(ext);
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

// The files of a folder in step order (completions_00002 before completions_00010; verl's 2.jsonl before 10.jsonl).
// A trainer's output folder holding TRL's completions/ folder is read through it.
Result<std::vector<std::string>> sample_files(const std::string& path) {
  std::error_code ec;
  fs::path dir(path);
  if (fs::is_directory(dir / "completions", ec)) dir /= "completions";
  std::vector<std::pair<int64_t, std::string>> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || !sample_file_name(entry.path())) continue;
    std::string file = entry.path().string();
    files.emplace_back(step_from_file_name(entry.path().filename().string()).value_or(-1), file);
  }
  if (ec) return Error{ErrorCode::unreadable, "cannot list the folder: " + ec.message(), path};
  if (files.empty()) {
    return Error{ErrorCode::unrecognized, "no sample files (*.parquet, *.jsonl) in this folder", dir.string()};
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (auto& f : files) out.push_back(std::move(f.second));
  return out;
}

Status read_one(const std::string& file, CellSink& sink, Diagnostics& diagnostics) {
  try {
    return is_parquet(file) ? read_parquet_samples(file, sink)
                            : read_jsonl_samples(file, sink, diagnostics);
  } catch (const std::exception& e) {  // Arrow's Parquet layer reports some damage by throwing
    return Error{ErrorCode::unreadable, std::string("cannot read: ") + e.what(), file};
  }
}

}  // namespace

std::optional<int64_t> step_from_file_name(std::string_view path) {
  size_t slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t end = name.find_last_of("0123456789");
  if (end == std::string_view::npos) return std::nullopt;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  if (end - begin >= 18) return std::nullopt;  // not a step: would overflow
  return std::stoll(std::string(name.substr(begin, end - begin + 1)));
}

Status read_table(const std::string& path, CellSink& sink, Diagnostics& diagnostics) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error{ErrorCode::not_found, "no such file or directory", path};
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    auto listed = sample_files(path);
    if (!listed.ok()) return listed.error();
    files = std::move(listed).value();
  } else {
    files.push_back(path);
  }
  for (const auto& file : files) {
    Status read = read_one(file, sink, diagnostics);
    if (!read.ok()) {
      // One damaged file of a folder is reported and skipped; a single file's error is the read's error.
      if (files.size() == 1) return read;
      diagnostics.add(Diagnostic{"unreadable_file", file, 0, to_string(read.error()) + "; file skipped"});
    }
  }
  if (sink.rows() == 0) {
    std::string why = "no samples could be read";
    if (!diagnostics.examples().empty()) why += "; first problem: " + to_string(diagnostics.examples().front());
    return Error{ErrorCode::unrecognized, why, path};
  }
  return Ok{};
}

}  // namespace rldk::samples
