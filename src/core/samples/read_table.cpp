// read_table(): a file or a folder of sample files, each sniffed (Parquet's PAR1 magic; W&B's table files; CSV/TSV
// and JSONL by name, and by their first bytes when the name does not say), into a CellSink.
#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>

#include "io/byte_source.h"
#include "samples/cell_sink.h"
#include "samples/csv_samples.h"
#include "samples/jsonl_samples.h"
#include "samples/parquet_samples.h"
#include "samples/wandb_table_samples.h"

namespace rldk::samples {
namespace fs = std::filesystem;
namespace {

bool is_parquet(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::string_view(magic, 4) == "PAR1";
}

bool ends_with_any(const std::string& name, std::initializer_list<std::string_view> tails) {
  return std::any_of(tails.begin(), tails.end(), [&](std::string_view e) {
    return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  });
}

bool csv_name(const std::string& name) {
  return ends_with_any(name, {".csv", ".tsv", ".csv.gz", ".tsv.gz", ".csv.zst", ".tsv.zst"});
}

bool json_name(const std::string& name) {
  return ends_with_any(name, {".jsonl", ".jsonl.gz", ".jsonl.zst", ".json", ".json.gz", ".json.zst"});
}


// The step that orders a folder's files: W&B names a table <key>_<step>_<hash>.table.json, where the hash has
// digits too.
std::optional<int64_t> file_step(const std::string& name) {
  return is_wandb_table_name(name) ? wandb_table_step(name) : step_from_file_name(name);
}

// The first bytes of a file, decompressed, past a UTF-8 byte order mark and leading space.
std::string head_of(const std::string& path) {
  auto source = io::open_byte_source(path);
  if (!source.ok()) return {};
  std::string head(4096, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = source.value()->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  head.resize(got);
  if (head.rfind("\xEF\xBB\xBF", 0) == 0) head.erase(0, 3);
  head.erase(0, std::min(head.size(), head.find_first_not_of(" \t\r\n")));
  return head;
}

// {"columns": ...: a W&B table (one JSON document), not a JSONL record.
bool looks_like_wandb_table(std::string_view head) {
  if (head.empty() || head.front() != '{') return false;
  head.remove_prefix(1);
  while (!head.empty() && std::isspace(static_cast<unsigned char>(head.front()))) head.remove_prefix(1);
  return head.rfind("\"columns\"", 0) == 0;
}

enum class FileKind { parquet, arrow_ipc, jsonl, csv, wandb_table };

// The name decides where it is clear (.csv, .tsv, .jsonl, W&B's .table.json); the content decides otherwise (a
// .json that holds a W&B table, a .txt or .gz or a name without extension: '{' starts JSON lines, anything else is
// taken as CSV).
FileKind kind_of(const std::string& file) {
  if (is_parquet(file)) return FileKind::parquet;
  std::string name = fs::path(file).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ends_with_any(name, {".arrow", ".feather"})) return FileKind::arrow_ipc;
  if (is_wandb_table_name(name)) return FileKind::wandb_table;
  if (csv_name(name)) return FileKind::csv;
  if (ends_with_any(name, {".jsonl", ".jsonl.gz", ".jsonl.zst"})) return FileKind::jsonl;
  std::string head = head_of(file);
  if (looks_like_wandb_table(head)) return FileKind::wandb_table;
  if (json_name(name) || head.empty() || head.front() == '{') return FileKind::jsonl;
  return FileKind::csv;
}

// The files of a folder in step order (completions_00002 before completions_00010; verl's 2.jsonl before 10.jsonl).
// A trainer's output folder holding TRL's completions/ folder is read through it.
// A folder without sample files of its own is read through the W&B run it holds (files/media/table/**). When it has
// both TRL's completions Parquet and W&B tables, the Parquet is read: TRL writes every sample there, at full
// precision, and logs the same samples to W&B (deduplicated by prompt with log_unique_prompts).
Result<std::vector<std::string>> sample_files(const std::string& path, Diagnostics& diagnostics) {
  std::error_code ec;
  fs::path dir(path);
  if (fs::is_directory(dir / "completions", ec)) dir /= "completions";
  std::vector<std::pair<int64_t, std::string>> files;
  bool parquet = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || !sample_file_name(entry.path())) continue;
    std::string name = entry.path().filename().string();
    parquet |= ends_with_any(name, {".parquet"});
    files.emplace_back(file_step(name).value_or(-1), entry.path().string());
  }
  if (ec) return Error{ErrorCode::unreadable, "cannot list the folder: " + ec.message(), path};
  if (files.empty()) {
    std::vector<std::string> tables = wandb_table_files(path, diagnostics);
    if (!tables.empty()) return tables;
    return Error{ErrorCode::unrecognized,
                 "no sample files (*.parquet, *.jsonl, *.csv, *.tsv, W&B run tables) in this folder", dir.string()};
  }
  if (parquet) {
    Diagnostics ignored;
    std::vector<std::string> tables = wandb_table_files(path, ignored);
    if (!tables.empty()) {
      diagnostics.add(Diagnostic{
          "wandb_tables_skipped", path, 0,
          "both TRL's completions Parquet and W&B tables are here; read the Parquet (every sample, full precision) "
          "and not the " + std::to_string(tables.size()) + " W&B table files in " +
              fs::path(tables.front()).parent_path().string() + " (name that folder to read them)"});
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (auto& f : files) out.push_back(std::move(f.second));
  return out;
}

Status read_one(const std::string& file, CellSink& sink, Diagnostics& diagnostics) {
  try {
    switch (kind_of(file)) {
      case FileKind::parquet: return read_parquet_samples(file, sink);
      case FileKind::arrow_ipc: return read_arrow_ipc_samples(file, sink);
      case FileKind::csv: return read_csv_samples(file, sink, diagnostics);
      case FileKind::wandb_table: return read_wandb_table_samples(file, sink, diagnostics);
      case FileKind::jsonl: break;
    }
    return read_jsonl_samples(file, sink, diagnostics);
  } catch (const std::exception& e) {  // Arrow's Parquet layer reports some damage by throwing
    return Error{ErrorCode::unreadable, std::string("cannot read: ") + e.what(), file};
  }
}

}  // namespace

bool sample_file_name(const fs::path& p) {
  std::string name = p.filename().string();
  if (name.rfind("wandb-", 0) == 0) return false;  // W&B's own files (wandb-summary.json, wandb-metadata.json)
  // Hugging Face datasets' metadata beside the .arrow shards of a save_to_disk folder.
  if (name == "dataset_info.json" || name == "state.json" || name == "dataset_dict.json") return false;
  return ends_with_any(name, {".parquet", ".arrow", ".feather"}) || json_name(name) || csv_name(name);
}

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
    auto listed = sample_files(path, diagnostics);
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
