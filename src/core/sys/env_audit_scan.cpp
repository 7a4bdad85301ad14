// The code side of the env audit: find where a repository's Python code seeds, turns determinism on or off, and
// builds DataLoaders, with file:line evidence.
//
// This is a lexical scan, not an import-resolving analysis: comments and string contents are blanked first (so a
// commented-out `cudnn.benchmark = True` or a docstring does not count), then every call is classified by its
// dotted callee name and its keyword arguments. It cannot follow values through variables (`shuffle=do_shuffle`
// counts as "maybe shuffled") or into `**kwargs`; docs/reproducibility.md lists what it sees.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "rldk/env_audit.h"

namespace rldk {
namespace {

namespace fs = std::filesystem;

// Directories that hold third-party or generated code, not the repository's own.
const std::set<std::string> SKIPPED_DIRS = {".git", ".hg", ".venv", "venv", ".tox", ".nox", "__pycache__",
                                            "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
                                            ".eggs", "build", "dist", ".ipynb_checkpoints"};
// Libraries whose import decides which seeds a script needs.
const std::set<std::string> TRACKED_IMPORTS = {"random", "numpy", "torch", "tensorflow", "jax", "transformers",
                                               "trl", "accelerate", "lightning", "pytorch_lightning", "deepspeed",
                                               "vllm", "rldk"};
// Helpers that seed random, NumPy and torch together.
const std::set<std::string> GLOBAL_SEED_HELPERS = {"set_seed", "seed_everything", "set_global_seed",
                                                   "set_random_seed", "enable_full_determinism", "seed_all"};

struct Source {
  std::string_view path;
  std::string_view text;     // original
  std::string code;          // comments and string contents blanked to spaces, same length and newlines
  std::string no_comments;   // comments blanked, strings kept
  std::vector<size_t> line_starts;

  size_t line_of(size_t offset) const {
    return static_cast<size_t>(std::upper_bound(line_starts.begin(), line_starts.end(), offset) -
                               line_starts.begin());
  }
  std::string snippet(size_t line) const {
    size_t begin = line_starts[line - 1];
    size_t end = line < line_starts.size() ? line_starts[line] : text.size();
    std::string s(text.substr(begin, end - begin));
    size_t first = s.find_first_not_of(" \t\r\n");
    size_t last = s.find_last_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    s = s.substr(first, last - first + 1);
    constexpr size_t MAX_SNIPPET = 160;
    if (s.size() > MAX_SNIPPET) s = s.substr(0, MAX_SNIPPET - 3) + "...";
    return s;
  }
};

void blank_comments_and_strings(Source& src) {
  const std::string_view t = src.text;
  src.code.assign(t.begin(), t.end());
  src.no_comments.assign(t.begin(), t.end());
  src.line_starts.push_back(0);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\n') src.line_starts.push_back(i + 1);
  }
  size_t i = 0;
  while (i < t.size()) {
    char c = t[i];
    if (c == '#') {
      while (i < t.size() && t[i] != '\n') {
        src.code[i] = ' ';
        src.no_comments[i] = ' ';
        ++i;
      }
      continue;
    }
    if (c != '\'' && c != '"') {
      ++i;
      continue;
    }
    bool triple = i + 2 < t.size() && t[i + 1] == c && t[i + 2] == c;
    size_t quote_len = triple ? 3 : 1;
    i += quote_len;
    while (i < t.size()) {
      if (t[i] == '\\' && i + 1 < t.size()) {
        if (t[i + 1] != '\n') src.code[i + 1] = ' ';
        src.code[i] = ' ';
        i += 2;
        continue;
      }
      if (t[i] == c && (!triple || (i + 2 < t.size() && t[i + 1] == c && t[i + 2] == c))) {
        i += quote_len;
        break;
      }
      if (t[i] == '\n' && !triple) break;  // unterminated single-line string: stop at the line's end
      if (t[i] != '\n') src.code[i] = ' ';
      ++i;
    }
  }
}

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string trim(std::string_view s) {
  size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  size_t last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

// Splits a call's argument text at top-level commas.
std::vector<std::string> split_arguments(std::string_view args) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    char c = args[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(args.substr(begin, i - begin)));
      begin = i + 1;
    }
  }
  std::string last = trim(args.substr(begin));
  if (!last.empty()) parts.push_back(last);
  return parts;
}

struct Call {
  std::string callee;  // dotted name, e.g. "torch.manual_seed"
  std::string last;    // last component, e.g. "manual_seed"
  std::vector<std::string> args;  // from the blanked code (strings empty)
  std::string raw_args;           // with strings, for keyword values like deterministic=False
  size_t line = 0;

  // The value of keyword `name`, or nullptr when absent.
  const std::string* keyword(const std::string& name) const {
    for (const auto& a : args) {
      if (a.size() > name.size() && a.compare(0, name.size(), name) == 0) {
        size_t j = name.size();
        while (j < a.size() && a[j] == ' ') ++j;
        if (j < a.size() && a[j] == '=' && (j + 1 >= a.size() || a[j + 1] != '=')) return &a;
      }
    }
    return nullptr;
  }
  std::string keyword_value(const std::string& name) const {
    const std::string* a = keyword(name);
    if (a == nullptr) return "";
    return trim(std::string_view(*a).substr(a->find('=') + 1));
  }
  bool has_star_kwargs() const {
    return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("**", 0) == 0; });
  }
  size_t positional() const {
    return static_cast<size_t>(std::count_if(args.begin(), args.end(), [](const std::string& a) {
      return a.find('=') == std::string::npos || a.find("==") != std::string::npos;
    }));
  }
};

std::vector<Call> find_calls(const Source& src) {
  std::vector<Call> calls;
  const std::string& code = src.code;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] != '(') continue;
    size_t begin = i;
    while (begin > 0 && (is_ident(code[begin - 1]) || code[begin - 1] == '.')) --begin;
    if (begin == i) continue;
    std::string callee = code.substr(begin, i - begin);
    // A leading dot is a method called on an expression: `torch.Generator().manual_seed(0)` has callee
    // ".manual_seed", which classify() reads like any other generator's method.
    if (std::isdigit(static_cast<unsigned char>(callee.front())) != 0) continue;
    // Definitions are not calls: `def seed(self):` must not read as an entropy seed.
    size_t before = begin;
    while (before > 0 && (code[before - 1] == ' ' || code[before - 1] == '\t')) --before;
    if (before >= 3 && code.compare(before - 3, 3, "def") == 0 && (before == 3 || !is_ident(code[before - 4]))) {
      continue;
    }
    if (before >= 5 && code.compare(before - 5, 5, "class") == 0) continue;
    int depth = 0;
    size_t close = i;
    for (; close < code.size(); ++close) {
      if (code[close] == '(') ++depth;
      if (code[close] == ')' && --depth == 0) break;
    }
    if (close >= code.size()) continue;  // unbalanced: the file does not parse as Python anyway
    Call call;
    call.callee = callee;
    size_t dot = callee.rfind('.');
    call.last = dot == std::string::npos ? callee : callee.substr(dot + 1);
    call.args = split_arguments(std::string_view(code).substr(i + 1, close - i - 1));
    call.raw_args = src.no_comments.substr(i + 1, close - i - 1);
    call.line = src.line_of(begin);
    calls.push_back(std::move(call));
  }
  return calls;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool mentions_clock(const std::string& raw_args) {
  return raw_args.find("time") != std::string::npos || raw_args.find("datetime") != std::string::npos;
}

bool is_false(const std::string& v) { return v == "False" || v == "0"; }
bool is_true(const std::string& v) { return v == "True" || v == "1"; }

// The kind of a call, or empty when it does not matter for reproducibility.
std::vector<std::string> classify(const Call& c, const std::set<std::string>& imports) {
  const std::string& n = c.callee;
  const std::string& last = c.last;
  bool numpy_qualified = starts_with(n, "np.") || starts_with(n, "numpy.");
  bool no_args = c.args.empty();
  if (last == "seed" || last == "manual_seed" || last == "manual_seed_all" || last == "default_rng" ||
      last == "RandomState" || last == "Random") {
    if ((last == "seed" || last == "default_rng" || last == "RandomState" || last == "Random") && no_args) {
      if (last == "Random" && n != "random.Random" && n != "Random") return {};
      return {"entropy_seed"};
    }
    if (mentions_clock(c.raw_args)) return {"entropy_seed"};
    if (last == "manual_seed_all" || (last == "manual_seed" && n.find("cuda") != std::string::npos)) {
      return {"torch_cuda_seed"};
    }
    if (last == "manual_seed") return {n == "torch.manual_seed" || n == "manual_seed" ? "torch_manual_seed"
                                                                                       : "generator_seed"};
    if (n == "random.seed") return {"python_seed"};
    if (numpy_qualified && (last == "seed" || last == "default_rng" || last == "RandomState")) return {"numpy_seed"};
    if (last == "default_rng" || last == "RandomState") return {"numpy_seed"};
    if (n == "random.Random" || n == "Random") return {"python_seed"};
    return {};
  }
  if (GLOBAL_SEED_HELPERS.count(last) != 0) {
    std::vector<std::string> kinds = {"global_seed_helper"};
    if (mentions_clock(c.raw_args)) return {"entropy_seed"};
    std::string deterministic = c.keyword_value("deterministic");
    if (last == "enable_full_determinism" || (last == "set_global_seed" && !is_false(deterministic)) ||
        (!deterministic.empty() && !is_false(deterministic))) {
      kinds.emplace_back("deterministic_on");
    }
    return kinds;
  }
  if (last == "use_deterministic_algorithms") {
    std::string mode = c.args.empty() ? "" : c.args.front();
    if (starts_with(mode, "mode")) mode = c.keyword_value("mode");
    return {is_false(mode) ? "deterministic_off" : "deterministic_on"};
  }
  if (last == "DataLoader" || last == "StatefulDataLoader") {
    if (c.has_star_kwargs()) return {};
    std::vector<std::string> kinds;
    std::string shuffle = c.keyword_value("shuffle");
    bool shuffled = !shuffle.empty() && !is_false(shuffle) && shuffle != "None";
    bool has_generator = c.keyword(std::string("generator")) != nullptr;
    if (shuffled && !has_generator && c.keyword("sampler") == nullptr) kinds.emplace_back("dataloader_shuffle_no_generator");
    if (shuffled && has_generator) kinds.emplace_back("dataloader_shuffle_generator");
    std::string workers = c.keyword_value("num_workers");
    bool parallel = !workers.empty() && workers != "0";
    if (parallel && c.keyword("worker_init_fn") == nullptr && !has_generator) {
      kinds.emplace_back("dataloader_workers_no_seed");
    }
    return kinds;
  }
  if (n == "os.urandom" || (n == "urandom" && imports.count("os") != 0)) return {"os_urandom"};
  if (starts_with(n, "random.") && imports.count("random") != 0 && n != "random.getstate" &&
      n != "random.setstate" && n != "random.SystemRandom") {
    return {"python_random_use"};
  }
  if ((starts_with(n, "np.random.") || starts_with(n, "numpy.random.")) && last != "get_state" &&
      last != "set_state" && last != "Generator" && last != "SeedSequence" && last != "PCG64") {
    return {"numpy_random_use"};
  }
  return {};
}

// `X = True|False` assignments of the torch backend flags that decide algorithm choice.
void find_flag_assignments(const Source& src, std::vector<CodeEvidence>& out, std::string_view path) {
  struct Flag {
    const char* name;
    const char* when_true;
    const char* when_false;
  };
  static const Flag FLAGS[] = {
      {"cudnn.benchmark", "cudnn_benchmark_true", "cudnn_benchmark_false"},
      {"cudnn.deterministic", "cudnn_deterministic_true", "cudnn_deterministic_false"},
      {"matmul.allow_tf32", "tf32_enabled", ""},
      {"cudnn.allow_tf32", "tf32_enabled", ""},
  };
  for (const Flag& f : FLAGS) {
    size_t len = std::strlen(f.name);
    for (size_t pos = src.code.find(f.name); pos != std::string::npos; pos = src.code.find(f.name, pos + len)) {
      size_t j = pos + len;
      if (j < src.code.size() && is_ident(src.code[j])) continue;
      while (j < src.code.size() && src.code[j] == ' ') ++j;
      if (j >= src.code.size() || src.code[j] != '=' || (j + 1 < src.code.size() && src.code[j + 1] == '=')) continue;
      ++j;
      while (j < src.code.size() && src.code[j] == ' ') ++j;
      size_t end = j;
      while (end < src.code.size() && is_ident(src.code[end])) ++end;
      std::string value = src.code.substr(j, end - j);
      const char* kind = is_false(value) ? f.when_false : f.when_true;  // a non-literal may be True: report it
      if (*kind == '\0') continue;
      size_t line = src.line_of(pos);
      out.push_back({kind, std::string(path) + ":" + std::to_string(line), src.snippet(line)});
    }
  }
}

// Environment variables set from code (os.environ[...] = ..., os.environ.setdefault, os.putenv).
void find_environment_settings(const Source& src, std::vector<CodeEvidence>& out, std::string_view path) {
  static const std::pair<const char*, const char*> VARS[] = {{"CUBLAS_WORKSPACE_CONFIG", "sets_cublas_workspace"},
                                                             {"PYTHONHASHSEED", "sets_pythonhashseed"}};
  for (const auto& [var, kind] : VARS) {
    for (size_t pos = src.no_comments.find(var); pos != std::string::npos;
         pos = src.no_comments.find(var, pos + 1)) {
      size_t line = src.line_of(pos);
      std::string text = src.snippet(line);
      if (text.find("environ") == std::string::npos && text.find("putenv") == std::string::npos) continue;
      out.push_back({kind, std::string(path) + ":" + std::to_string(line), text});
    }
  }
}

void find_imports(const Source& src, std::set<std::string>& imports) {
  std::istringstream lines(src.code);
  std::string line;
  while (std::getline(lines, line)) {
    std::string t = trim(line);
    bool from = starts_with(t, "from ");
    if (!from && !starts_with(t, "import ")) continue;
    std::string rest = t.substr(from ? 5 : 7);
    if (from) rest = rest.substr(0, rest.find(' '));
    for (const auto& part : split_arguments(rest)) {
      std::string module = part.substr(0, part.find_first_of(". "));
      if (!module.empty()) imports.insert(module);
    }
  }
}

}  // namespace

void scan_python_source(std::string_view path, std::string_view text, CodeScan& scan) {
  Source src;
  src.path = path;
  src.text = text;
  blank_comments_and_strings(src);
  std::set<std::string> imports;
  find_imports(src, imports);
  std::vector<CodeEvidence> found;
  for (const Call& call : find_calls(src)) {
    for (const auto& kind : classify(call, imports)) {
      found.push_back({kind, std::string(path) + ":" + std::to_string(call.line), src.snippet(call.line)});
    }
  }
  find_flag_assignments(src, found, path);
  find_environment_settings(src, found, path);
  // Calls are found in text order; assignments and settings after: restore line order within the file.
  auto line_number = [](const CodeEvidence& e) { return std::stoul(e.location.substr(e.location.rfind(':') + 1)); };
  std::stable_sort(found.begin(), found.end(),
                   [&](const CodeEvidence& a, const CodeEvidence& b) { return line_number(a) < line_number(b); });
  for (auto& e : found) scan.evidence.push_back(std::move(e));
  for (const auto& module : imports) {
    if (TRACKED_IMPORTS.count(module) != 0 &&
        std::find(scan.imports.begin(), scan.imports.end(), module) == scan.imports.end()) {
      scan.imports.push_back(module);
    }
  }
  std::sort(scan.imports.begin(), scan.imports.end());
}

Result<CodeScan> scan_repository_code(const std::string& repo_dir, const EnvAuditOptions& options) {
  std::error_code ec;
  if (!fs::exists(repo_dir, ec)) return Error{ErrorCode::not_found, "no such directory", repo_dir};
  CodeScan scan;
  scan.repo_dir = repo_dir;
  std::vector<fs::path> files;
  if (!fs::is_directory(repo_dir, ec)) {
    if (fs::path(repo_dir).extension() != ".py") {
      return Error{ErrorCode::unreadable, "not a directory or a Python file", repo_dir};
    }
    files.emplace_back(repo_dir);
  } else {
    fs::recursive_directory_iterator it(repo_dir, fs::directory_options::skip_permission_denied, ec);
    if (ec) return Error{ErrorCode::unreadable, "cannot list the directory: " + ec.message(), repo_dir};
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const fs::path& p = it->path();
      if (it->is_directory(ec)) {
        if (SKIPPED_DIRS.count(p.filename().string()) != 0) it.disable_recursion_pending();
        continue;
      }
      if (p.extension() == ".py" && it->is_regular_file(ec)) files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  auto skip = [&](const fs::path& file, const std::string& why) {
    constexpr size_t LISTED = 20;  // enough to act on; the count says how many in all
    if (scan.skipped.size() < LISTED) scan.skipped.push_back(file.lexically_relative(repo_dir).string() + ": " + why);
    ++scan.files_skipped;
  };
  for (const auto& file : files) {
    if (scan.files_scanned >= options.max_files) {
      scan.truncated = true;
      skip(file, "past the limit of " + std::to_string(options.max_files) + " files");
      continue;
    }
    auto size = fs::file_size(file, ec);
    if (ec || size > options.max_file_bytes) {
      skip(file, ec ? "cannot read its size: " + ec.message()
                    : std::to_string(size) + " bytes, over the " + std::to_string(options.max_file_bytes) +
                          "-byte limit for one file");
      continue;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      skip(file, "cannot open it");
      continue;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string label = fs::is_directory(repo_dir, ec) ? file.lexically_relative(repo_dir).string()
                                                       : file.filename().string();
    scan_python_source(label, text, scan);
    ++scan.files_scanned;
  }
  return scan;
}

}  // namespace rldk
