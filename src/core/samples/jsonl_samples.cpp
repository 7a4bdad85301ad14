#include "samples/jsonl_samples.h"

#include <cstring>
#include <memory>

#include "io/byte_source.h"
#include "io/lenient_json.h"

namespace rldk::samples {
namespace {

constexpr size_t MAX_LINE = size_t{64} << 20;  // as the run readers: a longer line is skipped, not buffered

class LineSamples {
 public:
  LineSamples(const std::string& path, CellSink& sink, Diagnostics& diagnostics)
      : path_(path), sink_(sink), diagnostics_(diagnostics) {}

  Status line(std::string_view text, uint64_t number) {
    size_t start = text.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) return Ok{};
    io::ParseError error;
    if (!io::parse_flat_object(text, record_, error)) {
      if (bad_++ < 5) {
        diagnostics_.add(Diagnostic{"malformed_json", path_, number,
                                    "malformed JSON at column " + std::to_string(error.offset + 1) + ": " +
                                        error.message + "; sample skipped"});
      }
      return Ok{};
    }
    if (!begun_) {
      // The first record names the columns; verl writes every key on every line.
      std::vector<FileColumn> columns;
      for (const auto& f : record_.fields) {
        columns.push_back({std::string(record_.key(f)), f.kind == io::ValueKind::number});
      }
      bool verl = has_key("input") && has_key("output") && has_key("score");
      Status begun = sink_.begin_file(path_, columns, step_from_file_name(path_),
                                           verl ? "jsonl (verl rollout dump)" : "jsonl");
      if (!begun.ok()) return begun;
      begun_ = true;
    }
    for (const auto& f : record_.fields) {
      int column = sink_.column_index(record_.key(f));
      if (column < 0) {
        column = sink_.add_column({std::string(record_.key(f)), f.kind == io::ValueKind::number});
      }
      switch (f.kind) {
        case io::ValueKind::number:
        case io::ValueKind::boolean: sink_.set_number(column, f.number); break;
        case io::ValueKind::string: sink_.set_text(column, record_.str(f)); break;
        case io::ValueKind::null: break;
      }
    }
    sink_.end_row(row_++);
    return Ok{};
  }

 private:
  bool has_key(std::string_view key) const {
    for (const auto& f : record_.fields) {
      if (record_.key(f) == key) return true;
    }
    return false;
  }

  const std::string& path_;
  CellSink& sink_;
  Diagnostics& diagnostics_;
  io::FlatRecord record_;
  bool begun_ = false;
  uint64_t bad_ = 0;
  uint64_t row_ = 0;
};

}  // namespace

Status read_jsonl_samples(const std::string& path, CellSink& sink, Diagnostics& diagnostics) {
  auto source = io::open_byte_source(path);
  if (!source.ok()) return source.error();
  LineSamples lines(path, sink, diagnostics);
  std::vector<char> buffer(1 << 20);
  std::string pending;
  uint64_t number = 0;
  bool skipping = false;
  for (;;) {
    size_t n = source.value()->read(buffer.data(), buffer.size());
    std::string_view bytes(buffer.data(), n);
    while (!bytes.empty()) {
      const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
      size_t len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - bytes.data()) : bytes.size();
      if (!skipping) pending.append(bytes.substr(0, len));
      if (pending.size() > MAX_LINE) {
        diagnostics.add(Diagnostic{"line_too_long", path, number + 1, "line longer than 64 MiB; skipped"});
        pending.clear();
        skipping = true;
      }
      if (!nl) break;
      ++number;
      if (!skipping) {
        Status s = lines.line(pending, number);
        if (!s.ok()) return s;
      }
      pending.clear();
      skipping = false;
      bytes.remove_prefix(len + 1);
    }
    if (n == 0) break;
  }
  if (!pending.empty() && !skipping) {
    Status s = lines.line(pending, ++number);
    if (!s.ok()) return s;
  }
  std::string problem = source.value()->problem();
  if (!problem.empty()) diagnostics.add(Diagnostic{"truncated_input", path, number, problem});
  return Ok{};
}

}  // namespace rldk::samples
