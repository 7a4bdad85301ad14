#include "io/mlflow_reader.h"

#include <sqlite3.h>

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "io/point_emitter.h"

namespace fs = std::filesystem;

namespace rldk::io {
namespace {

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

// `key: value` of a flat YAML mapping (MLflow's meta.yaml); empty when absent.
std::string yaml_value(const std::string& text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line(text.data() + pos, (end == std::string::npos ? text.size() : end) - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      std::string_view v = line.substr(key.size() + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\'' || v.front() == '"')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\'' || v.back() == '"')) v.remove_suffix(1);
      return std::string(v);
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return {};
}

// Python's str(float): digits, exponents, "nan", "inf", "-inf".
bool parse_double(std::string_view text, double& value) {
  if (text.empty()) return false;
  const char* begin = text.data();
  if (text.front() == '+') ++begin;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_int(std::string_view text, int64_t& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// MLflow's SQL store cannot hold infinities and writes +-DBL_MAX in their place.
double undo_infinity_substitute(double v) {
  if (v == DBL_MAX) return INFINITY;
  if (v == -DBL_MAX) return -INFINITY;
  return v;
}

void read_metric_file(const fs::path& file, const std::string& key, PointEmitter& emitter, Diagnostics& diagnostics) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    diagnostics.add(Diagnostic{"unreadable_file", file.string(), 0, "cannot open this metric file; skipped"});
    return;
  }
  std::string line;
  uint64_t number = 0;
  std::vector<std::string_view> parts;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    parts.clear();
    std::string_view rest(line);
    while (!rest.empty()) {
      size_t space = rest.find(' ');
      parts.push_back(rest.substr(0, space));
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space + 1);
    }
    // "timestamp value", "timestamp value step", or with the dataset name and digest appended.
    int64_t timestamp = 0, step = 0;
    double value = 0.0;
    bool ok = (parts.size() == 2 || parts.size() == 3 || parts.size() == 5) && parse_int(parts[0], timestamp) &&
              parse_double(parts[1], value) && (parts.size() == 2 || parse_int(parts[2], step));
    if (!ok) {
      diagnostics.add(Diagnostic{"mlflow_bad_line", file.string(), number,
                                 "expected 'timestamp_ms value step', got '" + line.substr(0, 80) + "'; skipped"});
      continue;
    }
    emitter.emit({}, key, step, value, static_cast<double>(timestamp) / 1000.0, number);
  }
}

void read_key_values(const fs::path& folder, const std::string& prefix, PointEmitter& emitter) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;
  std::vector<std::pair<std::string, fs::path>> entries;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    entries.emplace_back(it->path().lexically_relative(folder).generic_string(), it->path());
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [key, path] : entries) {
    // MLflow's own tags (mlflow.user, mlflow.source.name, ...) describe the machine, not the training run.
    if (key.rfind("mlflow.", 0) == 0) continue;
    emitter.meta({}, prefix + key, read_small_file(path));
  }
}

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StatementCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementCloser>;

Statement prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) return Statement(nullptr);
  return Statement(stmt);
}

std::string column_text(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

}  // namespace

bool is_mlflow_run_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(path) / "meta.yaml", ec) && fs::is_directory(fs::path(path) / "metrics", ec);
}

bool is_sqlite_file(const std::string& path) {
  // Only a regular file can be a database; opening a FIFO or a device here would block or never end.
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == 16 && std::string_view(header, 16) == std::string_view("SQLite format 3\0", 16);
}

Result<uint32_t> read_mlflow_run_dir(const std::string& path, const ReadOptions& options, PointSink& sink,
                                     Diagnostics& diagnostics) {
  fs::path dir(path);
  std::string meta = read_small_file(dir / "meta.yaml");
  ReadOptions opts = options;
  if (opts.run_id.empty()) {
    opts.run_id = yaml_value(meta, "run_id");
    if (opts.run_id.empty()) opts.run_id = dir.lexically_normal().filename().string();
  }
  PointEmitter emitter(SourceInfo{path, "mlflow", ""}, opts, sink);
  // Metric files, sorted by key so the run's metrics come in a stable order.
  fs::path metrics = dir / "metrics";
  std::vector<std::pair<std::string, fs::path>> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(metrics, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.emplace_back(it->path().lexically_relative(metrics).generic_string(), it->path());
  }
  if (ec) return Error{ErrorCode::unreadable, "cannot list the run's metrics: " + ec.message(), metrics.string()};
  std::sort(files.begin(), files.end());
  for (const auto& [key, file] : files) read_metric_file(file, key, emitter, diagnostics);
  if (emitter.points() == 0) {
    return Error{ErrorCode::unrecognized,
                 "MLflow run without metric points (" + std::to_string(files.size()) + " metric files)", path};
  }
  std::string name = yaml_value(meta, "run_name");
  if (!name.empty()) emitter.meta({}, "mlflow_run_name", name);
  std::string experiment = yaml_value(meta, "experiment_id");
  if (!experiment.empty()) emitter.meta({}, "mlflow_experiment_id", experiment);
  // Tags before params: a run's settings come from its params, and a setting read twice keeps the last value.
  read_key_values(dir / "tags", "tags.", emitter);
  read_key_values(dir / "params", "params.", emitter);
  emitter.meta_all("format_detail", "mlflow file store (" + std::to_string(files.size()) + " metrics)");
  return emitter.runs();
}

Result<uint32_t> read_mlflow_sqlite(const std::string& path, const ReadOptions& options, PointSink& sink,
                                    Diagnostics& diagnostics) {
  sqlite3* raw = nullptr;
  // Read-only, and never creating anything: the trainer may be writing to the same database.
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, SqliteCloser> db(raw);
  if (rc != SQLITE_OK) {
    return Error{ErrorCode::unreadable,
                 std::string("cannot open the SQLite database: ") + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)),
                 path};
  }
  sqlite3_busy_timeout(db.get(), 2000);  // wait out a writer's short transactions
  Statement points = prepare(db.get(),
                             "SELECT run_uuid, key, value, timestamp, step, is_nan FROM metrics "
                             "ORDER BY run_uuid, key, step, timestamp");
  if (!points) {
    return Error{ErrorCode::unrecognized,
                 std::string("not an MLflow tracking database (no readable metrics table: ") +
                     sqlite3_errmsg(db.get()) + ")",
                 path};
  }
  PointEmitter emitter(SourceInfo{path, "mlflow", ""}, options, sink);
  uint64_t row = 0;
  std::vector<std::string> run_ids;
  while ((rc = sqlite3_step(points.get())) == SQLITE_ROW) {
    ++row;
    std::string run = column_text(points.get(), 0);
    std::string key = column_text(points.get(), 1);
    if (run.empty() || key.empty()) {
      diagnostics.add(Diagnostic{"mlflow_bad_row", path, 0,
                                 "metrics row " + std::to_string(row) + " has no run id or key; skipped"});
      continue;
    }
    bool is_nan = sqlite3_column_int(points.get(), 5) != 0;
    double value = is_nan ? NAN : undo_infinity_substitute(sqlite3_column_double(points.get(), 2));
    double wall_time = static_cast<double>(sqlite3_column_int64(points.get(), 3)) / 1000.0;
    if (run_ids.empty() || run_ids.back() != run) run_ids.push_back(run);
    emitter.emit(run, key, sqlite3_column_int64(points.get(), 4), value, wall_time, 0);
  }
  if (rc != SQLITE_DONE) {
    diagnostics.add(Diagnostic{"sqlite_error", path, 0,
                               std::string("reading stopped after ") + std::to_string(row) +
                                   " metric rows: " + sqlite3_errmsg(db.get())});
  }
  if (emitter.points() == 0) return Error{ErrorCode::unrecognized, "the MLflow database holds no metric points", path};
  // Names, params and tags of the runs read (tables of MLflow's schema; absent ones are simply not reported).
  auto meta_query = [&](const char* sql, const std::string& prefix) {
    Statement s = prepare(db.get(), sql);
    if (!s) return;
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      std::string run = column_text(s.get(), 0);
      if (std::find(run_ids.begin(), run_ids.end(), run) == run_ids.end()) continue;
      emitter.meta(run, prefix + column_text(s.get(), 1), column_text(s.get(), 2));
    }
  };
  meta_query("SELECT run_uuid, 'mlflow_run_name', name FROM runs ORDER BY run_uuid", "");
  meta_query("SELECT run_uuid, 'mlflow_experiment_id', experiment_id FROM runs ORDER BY run_uuid", "");
  // Tags before params, as in the file store: a setting read twice keeps the last value, the param's.
  meta_query("SELECT run_uuid, key, value FROM tags WHERE key NOT LIKE 'mlflow.%' ORDER BY run_uuid, key", "tags.");
  meta_query("SELECT run_uuid, key, value FROM params ORDER BY run_uuid, key", "params.");
  emitter.meta_all("format_detail", "mlflow sqlite store (" + std::to_string(row) + " metric rows)");
  return emitter.runs();
}

}  // namespace rldk::io
