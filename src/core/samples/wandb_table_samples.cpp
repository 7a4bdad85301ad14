// W&B table files ({"columns": [...], "data": [[...], ...]}) read with the project's lenient JSON scanner
// (io::LenientParser): W&B writes NaN and Infinity as bare words, which strict parsers reject. A table is one JSON
// document, so a file is read whole; W&B itself caps a logged table's rows (wandb.Table.MAX_ROWS), and the reader
// refuses files above MAX_TABLE_BYTES rather than buffering anything.
#include "samples/wandb_table_samples.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <system_error>

#include "io/byte_source.h"
#include "io/lenient_json.h"

namespace rldk::samples {
namespace fs = std::filesystem;
namespace {

constexpr size_t MAX_TABLE_BYTES = size_t{1} << 30;

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string_view file_name(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Error malformed(const std::string& path, const io::LenientParser& p, std::string_view what) {
  std::string message = "malformed W&B table at byte " + std::to_string(p.error().offset + 1);
  if (!p.error().message.empty()) message += ": " + p.error().message;
  if (!what.empty()) message += " (" + std::string(what) + ")";
  return Error{ErrorCode::unreadable, message, path};
}

// A cell that is a list: a chat (a list of {role, content} messages, as TRL logs conversational prompts and
// completions) or a list of strings, as its texts joined by newlines. Other items are skipped.
bool list_text(io::LenientParser& p, io::FlatRecord& scratch, std::string& out) {
  out.clear();
  if (!p.consume('[')) return false;
  if (p.consume(']')) return true;
  std::string key;
  for (;;) {
    std::string part;
    bool has_part = false;
    if (p.peek() == '{') {
      p.consume('{');
      if (!p.consume('}')) {
        for (;;) {
          if (!p.string(key) || !p.consume(':')) return false;
          if (key == "content" && (p.peek() == '"' || p.peek() == '\'')) {
            if (!p.string(part)) return false;
            has_part = true;
          } else if (!p.skip_value()) {
            return false;
          }
          if (p.consume('}')) break;
          if (!p.consume(',')) return false;
        }
      }
    } else if (p.peek() == '"' || p.peek() == '\'') {
      if (!p.string(part)) return false;
      has_part = true;
    } else if (!p.skip_value()) {
      return false;
    }
    if (has_part) {
      if (!out.empty()) out += '\n';
      out += part;
    }
    scratch.clear();
    if (p.consume(']')) return true;
    if (!p.consume(',')) return false;
  }
}

}  // namespace

bool is_wandb_table_name(std::string_view path) { return ends_with(file_name(path), ".table.json"); }

std::optional<int64_t> wandb_table_step(std::string_view path) {
  std::string_view name = file_name(path);
  if (!ends_with(name, ".table.json")) return std::nullopt;
  name.remove_suffix(11);
  size_t hash = name.rfind('_');  // <key>_<step>_<hash>; the key may hold underscores itself
  if (hash == std::string_view::npos || hash == 0) return std::nullopt;
  size_t step = name.rfind('_', hash - 1);
  if (step == std::string_view::npos) return std::nullopt;
  std::string_view digits = name.substr(step + 1, hash - step - 1);
  if (digits.empty() || digits.size() >= 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  return std::stoll(std::string(digits));
}

Status read_wandb_table_samples(const std::string& path, CellSink& sink, Diagnostics& diagnostics) {
  auto source = io::open_byte_source(path);
  if (!source.ok()) return source.error();
  std::string text;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    size_t n = source.value()->read(buffer.data(), buffer.size());
    if (n == 0) break;
    text.append(buffer.data(), n);
    if (text.size() > MAX_TABLE_BYTES) {
      return Error{ErrorCode::unreadable, "W&B table larger than 1 GiB; not read", path};
    }
  }

  // The whole document is checked before any row reaches the sink, so a damaged table (a run killed while W&B
  // wrote it) is skipped whole rather than half read.
  io::LenientParser p(text);
  std::vector<FileColumn> columns;
  bool has_columns = false;
  size_t data_at = std::string::npos;
  if (!p.consume('{')) return malformed(path, p, "expected an object");
  std::string key;
  if (!p.consume('}')) {
    for (;;) {
      if (!p.string(key) || !p.consume(':')) return malformed(path, p, "expected a key");
      if (key == "columns") {
        if (!p.consume('[')) return malformed(path, p, "columns is not a list");
        has_columns = true;
        if (!p.consume(']')) {
          for (;;) {
            std::string name;
            if (!p.string(name)) return malformed(path, p, "a column name is not a string");
            columns.push_back({std::move(name), false});
            if (p.consume(']')) break;
            if (!p.consume(',')) return malformed(path, p, "in columns");
          }
        }
      } else {
        if (key == "data") {
          p.skip_space();
          data_at = p.offset();
        }
        if (!p.skip_value()) return malformed(path, p, key == "data" ? "in data" : "");
      }
      if (p.consume('}')) break;
      if (!p.consume(',')) return malformed(path, p, "expected ',' or '}'");
    }
  }
  if (!has_columns || data_at == std::string::npos) {
    return Error{ErrorCode::unrecognized, "not a W&B table (no \"columns\" and \"data\")", path};
  }

  // Numeric columns: those whose first non-null cell is a number (W&B writes numbers as JSON numbers).
  io::LenientParser data(std::string_view(text).substr(data_at));
  io::FlatRecord scratch;
  auto for_each_row = [&](auto&& cell) -> bool {
    if (!data.consume('[')) return false;
    if (data.consume(']')) return true;
    for (uint64_t row = 0;; ++row) {
      if (!data.consume('[')) return false;
      if (!data.consume(']')) {
        for (size_t c = 0;; ++c) {
          if (!cell(row, c)) return false;
          if (data.consume(']')) break;
          if (!data.consume(',')) return false;
        }
      }
      if (!cell(row, SIZE_MAX)) return false;  // end of the row
      if (data.consume(']')) return true;
      if (!data.consume(',')) return false;
    }
  };
  std::vector<int> kind(columns.size(), 0);  // 0: unknown yet, 1: number, 2: other
  bool typed = for_each_row([&](uint64_t, size_t c) {
    if (c == SIZE_MAX) return true;
    char next = data.peek();
    if (next == '[' || next == '{' || c >= columns.size()) return data.skip_value();
    io::ValueKind k;
    double number = 0;
    std::string_view str;
    scratch.clear();
    if (!data.scalar(scratch, k, number, str)) return false;
    if (kind[c] == 0 && k != io::ValueKind::null) kind[c] = k == io::ValueKind::number ? 1 : 2;
    return true;
  });
  if (!typed) return malformed(path, data, "in data");
  for (size_t c = 0; c < columns.size(); ++c) columns[c].numeric = kind[c] == 1;

  Status begun = sink.begin_file(path, columns, wandb_table_step(path), "wandb table");
  if (!begun.ok()) return begun;
  data = io::LenientParser(std::string_view(text).substr(data_at));
  std::string chat;
  uint64_t ragged = 0;
  size_t cells = 0;
  bool read = for_each_row([&](uint64_t row, size_t c) {
    if (c == SIZE_MAX) {
      if (cells != columns.size() && ragged++ < Diagnostics::EXAMPLES_PER_KIND) {
        diagnostics.add(Diagnostic{"ragged_row", path, 0,
                                   "data row " + std::to_string(row + 1) + " has " + std::to_string(cells) +
                                       " cells for " + std::to_string(columns.size()) + " columns; read as far "
                                       "as the columns go"});
      }
      cells = 0;
      sink.end_row(row);
      return true;
    }
    ++cells;
    int column = c < columns.size() ? static_cast<int>(c) : -1;
    char next = data.peek();
    if (next == '[') {
      if (!list_text(data, scratch, chat)) return false;
      if (column >= 0) sink.set_text(column, chat);
      return true;
    }
    if (next == '{' || column < 0) return data.skip_value();  // media references (images) and extra cells
    io::ValueKind k;
    double number = 0;
    std::string_view str;
    scratch.clear();
    if (!data.scalar(scratch, k, number, str)) return false;
    switch (k) {
      case io::ValueKind::number:
      case io::ValueKind::boolean: sink.set_number(column, number); break;
      case io::ValueKind::string: {
        // A number written as text ("12": a step column built from strings) is given as both, number first:
        // a step or reward role takes the number, a text role the text.
        double value = 0;
        if (io::parse_number(str, value)) sink.set_number(column, value);
        sink.set_text(column, str);
        break;
      }
      case io::ValueKind::null: break;
    }
    return true;
  });
  if (!read) return malformed(path, data, "in data");  // not reached: the same text was scanned above
  if (ragged > Diagnostics::EXAMPLES_PER_KIND) {
    diagnostics.add(Diagnostic{"ragged_row", path, 0, std::to_string(ragged) + " ragged rows in all"});
  }
  std::string problem = source.value()->problem();
  if (!problem.empty()) diagnostics.add(Diagnostic{"truncated_input", path, 0, problem});
  return Ok{};
}

std::vector<std::string> wandb_table_files(const fs::path& dir, Diagnostics& diagnostics) {
  std::error_code ec;
  // The run folders reachable from dir.
  auto is_run = [](const std::string& name) {
    return name.rfind("run-", 0) == 0 || name.rfind("offline-run-", 0) == 0;
  };
  fs::path run;
  if (fs::is_directory(dir / "media" / "table", ec)) {
    run = dir.parent_path();  // dir is a run's files/
  } else if (fs::is_directory(dir / "files" / "media" / "table", ec)) {
    run = dir;
  } else {
    fs::path runs = fs::is_directory(dir / "wandb", ec) ? dir / "wandb" : dir;
    std::vector<std::pair<std::string, fs::path>> found;
    for (const auto& entry : fs::directory_iterator(runs, ec)) {
      std::string name = entry.path().filename().string();
      if (!is_run(name) || entry.is_symlink(ec) || !fs::is_directory(entry.path() / "files" / "media" / "table", ec)) {
        continue;
      }
      // run-YYYYMMDD_HHMMSS-<id>: the time orders them, whatever the offline- prefix.
      found.emplace_back(name.substr(name.find("run-")), entry.path());
    }
    if (found.empty()) return {};
    std::sort(found.begin(), found.end());
    run = found.back().second;
    fs::path latest = fs::weakly_canonical(runs / "latest-run", ec);
    if (!ec) {
      for (const auto& f : found) {
        if (fs::weakly_canonical(f.second, ec) == latest) run = f.second;
      }
    }
    if (found.size() > 1) {
      diagnostics.add(Diagnostic{"wandb_runs", runs.string(), 0,
                                 std::to_string(found.size()) + " W&B runs with tables here; read the latest, " +
                                     run.filename().string() + " (name a run folder to read another)"});
    }
  }
  std::vector<std::pair<int64_t, std::string>> tables, completions;
  fs::path root = run / "files" / "media" / "table";
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || !is_wandb_table_name(it->path().string())) continue;
    std::string name = it->path().filename().string();
    auto entry = std::make_pair(wandb_table_step(name).value_or(-1), it->path().string());
    (name.rfind("completions_", 0) == 0 ? completions : tables).push_back(entry);
  }
  if (completions.empty()) completions = std::move(tables);
  std::sort(completions.begin(), completions.end());
  std::vector<std::string> out;
  for (auto& t : completions) out.push_back(std::move(t.second));
  return out;
}

}  // namespace rldk::samples
