#include "io/source_files.h"

#include "io/byte_source.h"
#include "io/mlflow_reader.h"
#include "rldk/reader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace fs = std::filesystem;

namespace rldk::io {
namespace {

const std::set<std::string> LOG_EXTENSIONS = {".jsonl", ".ndjson", ".csv", ".tsv", ".log", ".txt", ".out", ".err"};
const std::set<std::string> GENERIC_STEMS = {"trainer_state", "metrics", "progress", "events", "log", "logs",
                                             "train", "training", "output", "stdout", "stderr", "console",
                                             "history", "run", "debug", "scalars"};

// A JSON document (or a Parquet or Feather table) a training script dumped its step records into, found in a folder
// by a word of its name: log, history, metrics, stats, trajectory (training_log.json, dpo_history.json,
// step_stat_history.json: real runs commit such dumps beside their code). Whole words, split at '_', '-', '.' and
// blanks: a fault label file (logprob_mismatch.labels.json) or a catalog is no log. Other .json files in a project folder are settings
// (config.json, tokenizer.json, logging_config.json) whose numbers would read as a one-step run, so a name with a
// word that says settings is left out.
bool is_log_document_name(std::string stem) {
  std::transform(stem.begin(), stem.end(), stem.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::set<std::string> LOG_WORDS = {"log", "logs", "history", "metric", "metrics", "stats", "trajectory"};
  static const std::set<std::string> SETTINGS_WORDS = {"config", "configs", "settings", "tokenizer", "vocab", "index",
                                                       "manifest", "labels"};
  bool log = false;
  size_t start = 0;
  for (size_t i = 0; i <= stem.size(); ++i) {
    if (i < stem.size() && std::isalnum(static_cast<unsigned char>(stem[i]))) continue;
    std::string word = stem.substr(start, i - start);
    if (SETTINGS_WORDS.count(word)) return false;
    log = log || LOG_WORDS.count(word) > 0;
    start = i + 1;
  }
  return log;
}

// "a/b/run1.jsonl.gz" -> ("run1", ".jsonl")
std::pair<std::string, std::string> stem_and_extension(const fs::path& p) {
  std::string name = p.filename().string();
  for (std::string z : {".gz", ".zst", ".zstd"}) {
    if (name.size() > z.size() && name.compare(name.size() - z.size(), z.size(), z) == 0) {
      name.resize(name.size() - z.size());
      break;
    }
  }
  size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return {name, ""};
  std::string ext = name.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return {name.substr(0, dot), ext};
}

bool is_checkpoint_dir(const std::string& name, long& number) {
  if (name.rfind("checkpoint-", 0) != 0 || name.size() == 11) return false;
  number = 0;
  for (size_t i = 11; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    number = number * 10 + (name[i] - '0');
  }
  return true;
}

// run-YYYYMMDD_HHMMSS-<id> or offline-run-YYYYMMDD_HHMMSS-<id>: a W&B run folder.
bool is_wandb_run_dir(const std::string& name) {
  std::string_view rest(name);
  if (rest.rfind("offline-", 0) == 0) rest.remove_prefix(8);
  if (rest.rfind("run-", 0) != 0 || rest.size() < 4 + 15 + 2) return false;
  rest.remove_prefix(4);
  for (size_t i = 0; i < 15; ++i) {
    bool digit = rest[i] >= '0' && rest[i] <= '9';
    if (i == 8 ? rest[i] != '_' : !digit) return false;
  }
  return rest[15] == '-';
}

// TensorBoard's scalar download of one tag, run-<run>-tag-<tag>.csv or .json (the dashboard's "download data"):
// its run and tag, or false for any other name. `stem` and `ext` as stem_and_extension gives them.
constexpr std::string_view DOWNLOAD_TAG = "-tag-";
bool tensorboard_download(const std::string& stem, const std::string& ext, std::string& run, std::string& tag) {
  size_t at = stem.find(DOWNLOAD_TAG);
  if ((ext != ".csv" && ext != ".json") || !stem.starts_with("run-") || at == std::string::npos || at <= 4) {
    return false;
  }
  run = stem.substr(4, at - 4);
  tag = stem.substr(at + DOWNLOAD_TAG.size());
  return true;
}

}  // namespace

bool is_tensorboard_file(const std::string& name) { return name.rfind("events.out.tfevents.", 0) == 0; }

bool is_wandb_file(const std::string& name) {
  return name.size() > 10 && name.rfind("run-", 0) == 0 && name.compare(name.size() - 6, 6, ".wandb") == 0;
}

bool is_binary_run_file(const std::string& name) { return is_tensorboard_file(name) || is_wandb_file(name); }

namespace {
// A W&B run folder that holds its run-<id>.wandb log.
bool has_wandb_log(const fs::path& run_dir) {
  std::error_code ec;
  for (fs::directory_iterator it(run_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_wandb_file(it->path().filename().string())) return true;
  }
  return false;
}

// What a folder directly holds: its event files, oldest first (events.out.tfevents.<seconds since 1970>.<host>.<pid>.
// <n>, with ten-digit seconds, so names sort by time), and its subfolders.
struct EventFolder {
  std::vector<std::string> event_files, folders;
};
EventFolder event_folder(const fs::path& dir) {
  EventFolder out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_tensorboard_file(it->path().filename().string()) && it->is_regular_file(ec)) {
      out.event_files.push_back(it->path().string());
    } else if (it->is_directory(ec)) {
      out.folders.push_back(it->path().string());
    }
  }
  std::sort(out.event_files.begin(), out.event_files.end());
  std::sort(out.folders.begin(), out.folders.end());
  return out;
}

// The first tag an event file logs a scalar under (from its first 64 KiB).
std::string first_scalar_tag(const std::string& file) {
  struct FirstName final : PointSink {
    std::string raw;
    void on_run(uint32_t, const std::string&, const SourceInfo&) override {}
    void on_metric(uint32_t, uint32_t, const std::string&) override {}
    void on_raw_name(uint32_t, const std::string& name, const std::string&) override {
      if (raw.empty()) raw = name;
    }
    void on_segment(uint32_t, const Segment&) override {}
    void on_point(uint32_t, uint32_t, const Point&) override {}
    void on_meta(uint32_t, const std::string&, const std::string&) override {}
  } sink;
  auto source = open_byte_source(file);
  if (!source.ok()) return {};
  ReadOptions options;
  options.format = Format::tensorboard;
  options.run_id = "peek";
  Diagnostics diagnostics;
  StreamReader reader(SourceInfo{file, "", ""}, options, sink, diagnostics);
  std::string head(size_t{64} << 10, '\0');
  size_t got = 0;
  while (got < head.size()) {
    size_t n = source.value()->read(head.data() + got, head.size() - got);
    if (n == 0) break;
    got += n;
  }
  reader.feed(std::string_view(head.data(), got));
  reader.finish();  // an event cut at the 64 KiB mark is reported to the throwaway diagnostics
  return sink.raw;
}

}  // namespace

std::optional<std::string> add_scalars_key(std::string_view tag, std::string_view folder) {
  std::string prefix(tag);
  std::replace(prefix.begin(), prefix.end(), '/', '_');
  prefix += '_';
  if (folder.size() <= prefix.size() || !folder.starts_with(prefix)) return std::nullopt;
  return std::string(folder.substr(prefix.size()));
}

std::vector<std::string> tensorboard_log_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  EventFolder log_dir = event_folder(dir);
  std::vector<std::string>& files = log_dir.event_files;
  if (files.empty()) return {};
  // torch's and tensorboardX's add_scalars("reward", {"mean": m, "std": s}) write each key into a subfolder of the
  // log dir, reward_mean/ and reward_std/, under the one tag "reward": a subfolder holding only event files whose tag
  // names it so is part of this run (TensorBoardFormat reads the key back as reward/mean). Other subfolders (an eval
  // writer, HF's hparams folder) are runs of their own.
  for (const auto& sub : log_dir.folders) {
    EventFolder scalars = event_folder(sub);
    if (!scalars.folders.empty() || scalars.event_files.empty()) continue;
    std::string folder = fs::path(sub).filename().string();
    if (!add_scalars_key(first_scalar_tag(scalars.event_files.front()), folder)) continue;
    files.insert(files.end(), scalars.event_files.begin(), scalars.event_files.end());
  }
  if (files.size() < 2) files.clear();
  return std::move(files);
}

std::vector<std::string> wandb_run_files(const std::string& file) {
  std::vector<std::string> files;
  fs::path log(file);
  std::string name = log.filename().string(), folder = log.parent_path().filename().string();
  if (!is_wandb_file(name) || !is_wandb_run_dir(folder)) return files;
  // run-<id>.wandb in [offline-]run-YYYYMMDD_HHMMSS-<id>: the id ends both names.
  std::string id = name.substr(4, name.size() - 10);
  if (!folder.ends_with("-" + id)) return files;
  std::string time = folder.substr(folder.size() - id.size() - 16, 15);
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> later;  // (time, log)
  for (fs::directory_iterator it(log.parent_path().parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    std::string other = it->path().filename().string();
    if (!is_wandb_run_dir(other) || other.size() < id.size() + 17 || !other.ends_with("-" + id)) continue;
    std::string other_time = other.substr(other.size() - id.size() - 16, 15);
    fs::path other_log = it->path() / name;
    if (other_time > time && fs::is_regular_file(other_log, ec)) later.emplace_back(other_time, other_log.string());
  }
  if (later.empty()) return files;
  std::sort(later.begin(), later.end());
  files.push_back(file);
  for (auto& [t, f] : later) files.push_back(std::move(f));
  return files;
}

std::string default_run_id(const std::string& path) {
  if (path == "-") return "stdin";
  fs::path p(path);
  std::string file_name = p.filename().string();
  if (is_wandb_file(file_name)) return file_name.substr(4, file_name.size() - 10);  // run-<id>.wandb: W&B's run id
  if (is_tensorboard_file(file_name)) {
    // One TensorBoard run = one folder of event files (the log_dir given to the writer).
    std::string folder = fs::absolute(p).lexically_normal().parent_path().filename().string();
    return folder.empty() ? file_name : folder;
  }
  auto [stem, ext] = stem_and_extension(p);
  if (std::string run, tag; tensorboard_download(stem, ext, run, tag)) return run;  // a group's pattern too
  if (!GENERIC_STEMS.count(stem)) return stem;
  fs::path parent = fs::absolute(p).lexically_normal().parent_path();
  // W&B's console copy, run-YYYYMMDD_HHMMSS-<id>/files/output.log: the run's W&B id, as its .wandb log would give.
  std::string run_dir = parent.parent_path().filename().string();
  if (parent.filename() == "files" && is_wandb_run_dir(run_dir)) return run_dir.substr(run_dir.rfind('-') + 1);
  long n = 0;
  if (is_checkpoint_dir(parent.filename().string(), n)) parent = parent.parent_path();
  std::string name = parent.filename().string();
  return name.empty() ? stem : name;
}

std::string tensorboard_export_tag(const std::string& path) {
  auto [name, ext] = stem_and_extension(fs::path(path));
  if (std::string run, tag; tensorboard_download(name, ext, run, tag)) name = tag;
  for (std::string_view split : {"train_", "eval_"}) {
    if (name.starts_with(split) && name.size() > split.size()) name[split.size() - 1] = '/';
  }
  return name.empty() ? "value" : name;
}

std::vector<std::string> tensorboard_download_files(const std::string& entry) {
  fs::path pattern(entry);
  auto [stem, ext] = stem_and_extension(pattern);
  std::string run, tag;
  if (!tensorboard_download(stem, ext, run, tag) || tag != "*") return {};
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(pattern.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    auto [other_stem, other_ext] = stem_and_extension(it->path());
    std::string other_run, other_tag;
    if (tensorboard_download(other_stem, other_ext, other_run, other_tag) && other_run == run && other_ext == ext &&
        other_tag != "*" && it->is_regular_file(ec)) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<std::string>> list_source_files(const std::string& path) {
  if (path == "-") return std::vector<std::string>{"-"};
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return Error{ErrorCode::unreadable, "cannot access: " + ec.message(), path};
    }
    return Error{ErrorCode::not_found, "no such file or directory", path};
  }
  if (!fs::is_directory(status)) return std::vector<std::string>{path};
  if (is_mlflow_run_dir(path)) return std::vector<std::string>{path};

  std::vector<std::string> files;
  std::string notebook;  // the first notebook seen, named in the error when nothing else is found
  // trainer_state.json per run root: the top-level copy (-1) or the newest checkpoint-N.
  std::map<std::string, std::pair<long, std::string>> trainer_states;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Error{ErrorCode::unreadable, "cannot list directory: " + ec.message(), path};
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Error{ErrorCode::unreadable, "cannot list directory: " + ec.message(), path};
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (name.empty() || name[0] == '.' || name == "__pycache__" || name == "node_modules") {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if ((name == "files" || name == "logs") && is_wandb_run_dir(p.parent_path().filename().string())) {
      // W&B's copies of the console output and its own debug logs: the run's metrics are in its .wandb log. A run
      // folder committed without that log (it is often git-ignored) still has the console copy, files/output.log:
      // that is the run then (not the folder's other files: requirements.txt, config.yaml).
      if (it->is_directory(ec)) it.disable_recursion_pending();
      fs::path console_copy = p / "output.log";
      if (name == "files" && !has_wandb_log(p.parent_path()) && fs::is_regular_file(console_copy, ec)) {
        files.push_back(console_copy.string());
      }
      continue;
    }
    if (it->is_directory(ec) && is_mlflow_run_dir(p.string())) {
      files.push_back(p.string());  // one MLflow run (file store), read as a whole
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    if (it->is_symlink(ec)) {
      // wandb/debug.log and wandb/debug-internal.log link into the latest W&B run folder's logs/: not run logs.
      fs::path target = fs::canonical(p, ec);
      if (!ec && is_wandb_run_dir(target.parent_path().parent_path().filename().string())) continue;
    }
    auto [stem, ext] = stem_and_extension(p);
    if (stem == "trainer_state" && ext == ".json") {
      fs::path root = p.parent_path();
      long n = -1;
      if (is_checkpoint_dir(root.filename().string(), n)) root = root.parent_path();
      else n = -1;
      auto& best = trainer_states[root.string()];
      bool better = best.second.empty() || (n == -1) || (best.first != -1 && n > best.first);
      if (better) best = {n, p.string()};
      continue;
    }
    if (ext == ".ipynb" && notebook.empty()) notebook = p.string();
    // Tables (Parquet, Feather) by the same words as JSON dumps: TRL's completions_00005.parquet are samples.
    std::string download_run, download_tag;
    bool log_document = ((ext == ".json" || ext == ".parquet" || ext == ".feather") && is_log_document_name(stem)) ||
                        (ext == ".json" && tensorboard_download(stem, ext, download_run, download_tag));
    if (LOG_EXTENSIONS.count(ext) || is_binary_run_file(name) || log_document) {
      files.push_back(p.string());
    }
    else if ((ext == ".db" || ext == ".sqlite") && is_sqlite_file(p.string())) files.push_back(p.string());  // MLflow
  }
  // A W&B run resumed later is read with its first log (wandb_run_files): its later logs are no entries of their own.
  std::set<std::string> resumed;
  for (const auto& f : files) {
    std::vector<std::string> run = wandb_run_files(f);
    if (run.size() > 1) resumed.insert(run.begin() + 1, run.end());
  }
  std::erase_if(files, [&](const std::string& f) { return resumed.count(f) > 0; });
  // The event files of one log dir (and of its add_scalars subfolders) are one run, read as one entry: the folder.
  // Folders nearer the top first, so that a log dir claims its subfolders' files before they could group alone.
  std::set<std::string> event_dirs;
  for (const auto& f : files) {
    if (is_tensorboard_file(fs::path(f).filename().string())) event_dirs.insert(fs::path(f).parent_path().string());
  }
  std::vector<std::string> by_depth(event_dirs.begin(), event_dirs.end());
  std::stable_sort(by_depth.begin(), by_depth.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
  });
  std::set<std::string> grouped;
  for (const auto& dir : by_depth) {
    if (grouped.count(dir)) continue;
    std::vector<std::string> group = tensorboard_log_files(dir);
    if (group.empty()) continue;
    for (const auto& f : group) grouped.insert(fs::path(f).parent_path().string());
    std::erase_if(files, [&](const std::string& f) { return std::find(group.begin(), group.end(), f) != group.end(); });
    files.push_back(dir);
  }
  // A Trainer's output_dir holds its log twice: trainer_state.json (log_history, as of the last save) and, with
  // report_to tensorboard, output_dir/runs/<date>_<host>/ event files (every log call, up to a crash). The events
  // are the run; the state file is read where no such log dir is beside it.
  for (auto& [root, choice] : trainer_states) {
    std::string runs_dir = (fs::path(root) / "runs").string() + "/";
    bool logged_to_tensorboard = std::any_of(event_dirs.begin(), event_dirs.end(),
                                             [&](const std::string& dir) { return dir.rfind(runs_dir, 0) == 0; });
    if (!logged_to_tensorboard) files.push_back(choice.second);
  }
  // With rldk's trainer callback the same log is there a third time, output_dir/rldk/metrics.jsonl (beside its
  // report.json), canonical and complete: that is the run, not the trainer's copies.
  std::vector<std::string> callback_roots;
  for (const auto& f : files) {
    fs::path p(f);
    if (p.filename() == "metrics.jsonl" && p.parent_path().filename() == "rldk" &&
        fs::is_regular_file(p.parent_path() / "report.json", ec)) {
      callback_roots.push_back(p.parent_path().parent_path().string() + "/");
    }
  }
  std::erase_if(files, [&](const std::string& f) {
    fs::path p(f);
    bool state = p.filename() == "trainer_state.json";
    return std::any_of(callback_roots.begin(), callback_roots.end(), [&](const std::string& root) {
      return f.rfind(root, 0) == 0 && (state || f.rfind(root + "runs/", 0) == 0);
    });
  });
  // TensorBoard downloads of one run's tags (one tag a file), folder by folder: one entry, a pattern for the group.
  std::map<std::string, std::vector<std::string>> downloads;
  for (const auto& f : files) {
    auto [stem, ext] = stem_and_extension(fs::path(f));
    std::string run, tag;
    if (!tensorboard_download(stem, ext, run, tag)) continue;
    std::string entry = "run-" + run + std::string(DOWNLOAD_TAG) + "*" + ext;
    downloads[(fs::path(f).parent_path() / entry).string()].push_back(f);
  }
  for (const auto& download : downloads) {
    const std::vector<std::string>& group = download.second;  // named: clang 14 lambdas cannot capture a binding
    if (group.size() < 2) continue;
    std::erase_if(files, [&](const std::string& f) { return std::find(group.begin(), group.end(), f) != group.end(); });
    files.push_back(download.first);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    // Notebooks are read only when named (most notebooks in a project folder are not training runs), so a folder
    // holding only the Colab notebook that ran the training says how to read it.
    std::string hint =
        notebook.empty() ? "" : "; it holds a Jupyter notebook: name it to read its outputs (" + notebook + ")";
    return Error{ErrorCode::unrecognized,
                 "no run logs found in this directory (looked for .jsonl, .csv, .tsv, .log, .txt, "
                 "trainer_state.json, .json, .parquet and .feather files with log, history, metrics, stats or "
                 "trajectory in the name, also gzip/zstd compressed, TensorBoard events.out.tfevents.* files, W&B "
                 "run-*.wandb logs, MLflow mlruns/ run folders and mlflow.db SQLite stores)" + hint,
                 path};
  }
  return files;
}

}  // namespace rldk::io
