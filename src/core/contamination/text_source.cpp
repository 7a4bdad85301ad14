// Training and eval texts out of the sample-table readers (JSONL, CSV, Parquet, W&B tables, compressed too) and plain
// text files (.txt: one document per line, the layout of prompt lists and of most n-gram tooling's inputs). A
// CellSink picks the text columns of each file by name; every text cell of a row is one text (a training document,
// or one checked field of an eval item), so a match names the field it is in.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "io/byte_source.h"
#include "rldk/contamination.h"
#include "samples/cell_sink.h"

namespace rldk::contamination {
namespace fs = std::filesystem;

// Prompt-like and answer-like columns of RL prompt pools (verl: prompt, reward_model/ground_truth; TRL: prompt,
// completion), SFT/chat data and eval sets (question, problem, answer, solution), and pretraining text (text).
const std::vector<std::string> DEFAULT_TEXT_COLUMNS = {
    "prompt", "question", "problem", "query", "instruction", "input", "text", "content", "context",
    "answer", "solution", "reference", "reference_answer", "ground_truth", "gold", "target", "output",
    "response", "completion", "chosen"};

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool plain_text_file(const std::string& path) {
  std::string name = lower(fs::path(path).filename().string());
  for (std::string_view tail : {".txt", ".txt.gz", ".txt.zst", ".text"}) {
    if (name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0) return true;
  }
  return false;
}

// Named columns match exactly; the default names also match the last part of a nested field (extra_info/question).
bool text_column(std::string_view name, const TextColumns& columns) {
  if (!columns.columns.empty()) {
    return std::find(columns.columns.begin(), columns.columns.end(), name) != columns.columns.end();
  }
  std::string l = lower(name);
  size_t slash = l.rfind('/');
  std::string last = slash == std::string::npos ? l : l.substr(slash + 1);
  return std::find(DEFAULT_TEXT_COLUMNS.begin(), DEFAULT_TEXT_COLUMNS.end(), l) != DEFAULT_TEXT_COLUMNS.end() ||
         std::find(DEFAULT_TEXT_COLUMNS.begin(), DEFAULT_TEXT_COLUMNS.end(), last) != DEFAULT_TEXT_COLUMNS.end();
}

uint32_t field_index(std::vector<std::string>& fields, std::string_view name) {
  auto it = std::find(fields.begin(), fields.end(), name);
  if (it != fields.end()) return static_cast<uint32_t>(it - fields.begin());
  fields.emplace_back(name);
  return static_cast<uint32_t>(fields.size() - 1);
}

// Rows of one file: the text cells of the checked columns, and (for eval sets) every cell, to write the row back out.
class TextRows final : public samples::CellSink {
 public:
  using OnRow = std::function<void(uint64_t row, std::vector<EvalText>& texts, Json* record)>;
  TextRows(const TextColumns& columns, std::vector<std::string>& fields, bool keep_records, OnRow on_row)
      : columns_(columns), fields_(fields), keep_records_(keep_records), on_row_(std::move(on_row)) {}

  Status begin_file(const std::string& path, const std::vector<samples::FileColumn>& columns,
                    std::optional<int64_t>, const std::string&) override {
    names_.clear();
    text_field_.clear();
    for (const auto& c : columns) add_column(c);
    bool any = std::any_of(text_field_.begin(), text_field_.end(), [](int f) { return f >= 0; });
    // JSONL names its columns from the first record; a text column may still appear later, so only a file whose
    // first record has none of them and is not JSONL is refused here.
    if (!any && !path.ends_with(".jsonl") && !path.ends_with(".json")) {
      return Error{ErrorCode::unrecognized, "no text column (" + wanted() + "); name one with --text-col", path};
    }
    clear();
    return Ok{};
  }
  int column_index(std::string_view name) const override { return samples::position_of(names_, name); }
  int add_column(const samples::FileColumn& column) override {
    names_.push_back(column.name);
    text_field_.push_back(text_column(column.name, columns_) ? static_cast<int>(field_index(fields_, column.name))
                                                             : -1);
    return static_cast<int>(names_.size() - 1);
  }
  void set_text(int column, std::string_view text) override {
    if (column < 0 || static_cast<size_t>(column) >= names_.size()) return;
    if (text_field_[column] >= 0) texts_.push_back(EvalText{static_cast<uint32_t>(text_field_[column]), std::string(text)});
    if (keep_records_) record_[names_[column]] = std::string(text);
  }
  void set_number(int column, double value) override {
    if (column < 0 || static_cast<size_t>(column) >= names_.size() || !keep_records_) return;
    if (value == std::floor(value) && std::fabs(value) < 9e15) {
      record_[names_[column]] = static_cast<int64_t>(value);
    } else {
      record_[names_[column]] = value;
    }
  }
  void end_row(uint64_t row) override {
    ++rows_;
    on_row_(row, texts_, keep_records_ ? &record_ : nullptr);
    clear();
  }
  uint64_t rows() const override { return rows_; }

  std::string wanted() const {
    const auto& names = columns_.columns.empty() ? DEFAULT_TEXT_COLUMNS : columns_.columns;
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

 private:
  void clear() {
    texts_.clear();
    record_ = Json::Object{};
  }
  const TextColumns& columns_;
  std::vector<std::string>& fields_;
  bool keep_records_;
  OnRow on_row_;
  std::vector<std::string> names_;
  std::vector<int> text_field_;
  std::vector<EvalText> texts_;
  Json record_ = Json::Object{};
  uint64_t rows_ = 0;
};

// A .txt file: each non-empty line is a row with one field, "text".
Status read_lines(const std::string& path, const std::function<void(uint64_t, std::string_view)>& on_line,
                  Diagnostics& diagnostics) {
  auto source = io::open_byte_source(path);
  if (!source.ok()) return source.error();
  std::vector<char> buffer(size_t{1} << 20);
  std::string pending;
  uint64_t line = 0;
  auto emit = [&](std::string_view text) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (!text.empty()) on_line(line, text);
    ++line;
  };
  for (;;) {
    size_t n = source.value()->read(buffer.data(), buffer.size());
    if (n == 0) break;
    std::string_view bytes(buffer.data(), n);
    while (!bytes.empty()) {
      const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
      if (!nl) {
        pending.append(bytes);
        break;
      }
      size_t len = static_cast<size_t>(static_cast<const char*>(nl) - bytes.data());
      if (pending.empty()) {
        emit(bytes.substr(0, len));
      } else {
        pending.append(bytes.substr(0, len));
        emit(pending);
        pending.clear();
      }
      bytes.remove_prefix(len + 1);
    }
  }
  if (!pending.empty()) emit(pending);
  std::string problem = source.value()->problem();
  if (!problem.empty()) diagnostics.add(Diagnostic{"truncated_input", path, line, problem});
  return Ok{};
}

Result<std::vector<std::string>> files_of(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error{ErrorCode::not_found, "no such file or directory", path};
  if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    if (samples::sample_file_name(entry.path()) || plain_text_file(entry.path().string())) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return Error{ErrorCode::unreadable, "cannot list the folder: " + ec.message(), path};
  if (files.empty()) {
    return Error{ErrorCode::unrecognized, "no data files (*.jsonl, *.csv, *.parquet, *.txt) in this folder", path};
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Reads one file's rows; `keep_records` also collects each row's cells (eval sets).
Status read_file_rows(const std::string& file, const TextColumns& columns, std::vector<std::string>& fields,
                      bool keep_records, const TextRows::OnRow& on_row, Diagnostics& diagnostics) {
  if (plain_text_file(file)) {
    uint32_t field = field_index(fields, "text");
    std::vector<EvalText> texts(1);
    Json record = Json::Object{};
    return read_lines(file, [&](uint64_t line, std::string_view text) {
      texts.resize(1);
      texts[0] = EvalText{field, std::string(text)};
      if (keep_records) record["text"] = std::string(text);
      on_row(line, texts, keep_records ? &record : nullptr);
    }, diagnostics);
  }
  TextRows rows(columns, fields, keep_records, on_row);
  uint64_t without_text = 0;
  TextRows counted(columns, fields, keep_records, [&](uint64_t row, std::vector<EvalText>& texts, Json* record) {
    if (texts.empty()) {
      if (without_text++ < Diagnostics::EXAMPLES_PER_KIND) {
        diagnostics.add(Diagnostic{"no_text", file, row + 1,
                                   "row " + std::to_string(row + 1) + " has no text in the checked columns (" +
                                       rows.wanted() + "); skipped"});
      }
      return;
    }
    on_row(row, texts, record);
  });
  Status read = samples::read_table(file, counted, diagnostics);
  if (without_text > Diagnostics::EXAMPLES_PER_KIND) {
    diagnostics.add(Diagnostic{"no_text", file, 0,
                               std::to_string(without_text) + " rows without text in the checked columns in all"});
  }
  return read;
}

}  // namespace

Result<std::vector<std::string>> training_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    auto files = files_of(p);
    if (!files.ok()) return files.error();
    out.insert(out.end(), files->begin(), files->end());
  }
  return out;
}

Result<EvalSet> read_eval_set(const std::string& path, const TextColumns& columns, Diagnostics& diagnostics) {
  auto files = files_of(path);
  if (!files.ok()) return files.error();
  EvalSet set;
  set.source = path;
  set.files = files.value();
  for (uint32_t f = 0; f < set.files.size(); ++f) {
    Status read = read_file_rows(set.files[f], columns, set.fields, true,
                                 [&](uint64_t row, std::vector<EvalText>& texts, Json* record) {
                                   EvalItem item;
                                   item.row = row;
                                   item.file = f;
                                   item.texts = std::move(texts);
                                   item.record = record->dump(-1);
                                   set.items.push_back(std::move(item));
                                 },
                                 diagnostics);
    if (!read.ok()) {
      if (set.files.size() == 1) return read.error();
      diagnostics.add(Diagnostic{"unreadable_file", set.files[f], 0, to_string(read.error()) + "; file skipped"});
    }
  }
  if (set.items.empty()) return Error{ErrorCode::unrecognized, "no eval texts could be read", path};
  return set;
}

Status read_training(const std::vector<std::string>& paths, uint32_t first_file, const TextColumns& columns,
                     std::vector<std::string>& files, std::vector<std::string>& fields,
                     const std::function<void(const TrainDoc&)>& on_doc, Diagnostics& diagnostics) {
  auto listed = training_files(paths);
  if (!listed.ok()) return listed.error();
  for (const auto& file : listed.value()) {
    uint32_t number = first_file + static_cast<uint32_t>(files.size());
    files.push_back(file);
    if (plain_text_file(file)) {  // lines go to the scan as they are, without a copy per line
      uint32_t field = field_index(fields, "text");
      Status read = read_lines(file, [&](uint64_t line, std::string_view text) {
        on_doc(TrainDoc{DocRef{number, field, line}, text});
      }, diagnostics);
      if (!read.ok()) {
        if (listed->size() == 1) return read.error();
        diagnostics.add(Diagnostic{"unreadable_file", file, 0, to_string(read.error()) + "; file skipped"});
      }
      continue;
    }
    Status read = read_file_rows(file, columns, fields, false,
                                 [&](uint64_t row, std::vector<EvalText>& texts, Json*) {
                                   for (const auto& t : texts) on_doc(TrainDoc{DocRef{number, t.field, row}, t.text});
                                 },
                                 diagnostics);
    if (!read.ok()) {
      if (listed->size() == 1) return read.error();
      diagnostics.add(Diagnostic{"unreadable_file", file, 0, to_string(read.error()) + "; file skipped"});
    }
  }
  return Ok{};
}

}  // namespace rldk::contamination
