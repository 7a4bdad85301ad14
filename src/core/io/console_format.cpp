// Console text, as trainers print it. Each line (and each carriage-return piece of a tqdm-mangled line) is tried
// against the known shapes; anything else is ordinary log text, not an error:
//   HF/TRL      {'loss': 0.69, 'grad_norm': 1.2, 'learning_rate': 1e-06, 'epoch': 0.01}
//   OpenRLHF    INFO 08-13 19:25:45 ppo_trainer.py:547] ✨ Global step 12: {'policy_loss': 0.01, ...}
//   verl        (TaskRunner pid=3165) step:71 - actor/entropy:0.119 - critic/vf_loss:np.float64(0.007) - ...
//   generic     step=10 kl=0.12 reward_mean=0.5
// HF console dicts carry no step: they are numbered by log call (1, 2, ...; eval and summary dicts take the number
// of the last training dict), recorded in the run's meta as step_source.
#include <map>

#include "io/line_format.h"

namespace rldk::io {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '@' || c == '-';
}

// Parses a decimal integer at the start of `s`; returns the number of characters used (0 if none).
size_t leading_int(std::string_view s, int64_t& out) {
  size_t i = 0;
  out = 0;
  while (i < s.size() && i < 18 && s[i] >= '0' && s[i] <= '9') out = out * 10 + (s[i++] - '0');
  return i;
}

class ConsoleFormat final : public LineFormat {
 public:
  explicit ConsoleFormat(ReadContext& context) : context_(context), records_(context) {}

  void line(std::string_view text, uint64_t number) override {
    strip_ansi(text);
    std::string_view rest = clean_;
    // tqdm redraws with carriage returns; every piece may hold a record.
    for (;;) {
      size_t cr = rest.find('\r');
      piece(rest.substr(0, cr), number);
      if (cr == std::string_view::npos) break;
      rest.remove_prefix(cr + 1);
    }
  }

  void finish() override {
    if (kinds_.count("hf-dict") && !hf_has_step_) context_.emitter.meta("", "step_source", "hf log call index");
  }

  std::string detail() const override {
    std::string out;
    for (const auto& [kind, count] : kinds_) out += (out.empty() ? "" : ", ") + kind;
    return "console (" + (out.empty() ? std::string("no metric lines") : out) + ")";
  }

 private:
  void strip_ansi(std::string_view text) {
    clean_.clear();
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
        i += 2;
        while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
        continue;
      }
      clean_.push_back(text[i]);
    }
  }

  void piece(std::string_view s, uint64_t number) {
    s = trim(s);
    // Ray prefixes worker output with "(TaskRunner pid=3165) " or "(main_task pid=63313, ip=10.0.0.1) ".
    if (starts_with(s, "(")) {
      size_t close = s.find(") ");
      if (close != std::string_view::npos && close < 120 && s.substr(0, close).find("pid=") != std::string_view::npos) {
        s = trim(s.substr(close + 2));
      }
    }
    if (s.empty()) return;
    if (starts_with(s, "step:") && verl(s, number)) return;
    if (size_t at = s.find("Global step "); at != std::string_view::npos && openrlhf(s.substr(at + 12), number)) return;
    if (size_t at = s.find("global_step "); at != std::string_view::npos && openrlhf_eval(s.substr(at + 12), number)) {
      return;
    }
    if (s.front() == '{' && s.size() > 1 && (s[1] == '\'' || s[1] == '"')) {
      hf_dict(s, number);  // a dict line; reported if malformed
      return;
    }
    // Captured output often has the dict glued to a tqdm bar that ended without a newline: "...it/s]{'loss': ...}".
    if (size_t brace = s.find("{'"); brace != std::string_view::npos && s.back() == '}') {
      hf_dict(s.substr(brace), number);
      return;
    }
    if (s.find('=') != std::string_view::npos && s.find("%|") == std::string_view::npos) key_values(s, number);
  }

  bool verl(std::string_view s, uint64_t number) {
    record_.clear();
    size_t pos = 0;
    while (pos < s.size()) {
      size_t end = s.find(" - ", pos);
      std::string_view item = s.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
      pos = end == std::string_view::npos ? s.size() : end + 3;
      // The key ends at the last ':' outside parentheses: keys contain '/', '@' and ':' is rare; values may be
      // wrapped as np.float64(...).
      int depth = 0;
      size_t colon = std::string_view::npos;
      for (size_t i = item.size(); i-- > 0;) {
        char c = item[i];
        if (c == ')') ++depth;
        else if (c == '(') --depth;
        else if (c == ':' && depth == 0) {
          colon = i;
          break;
        }
      }
      if (colon == std::string_view::npos || colon == 0) continue;
      add_scalar(item.substr(0, colon), item.substr(colon + 1));
    }
    if (record_.fields.empty()) return false;
    ++kinds_["verl"];
    records_.wide(record_, number, std::nullopt);
    return true;
  }

  // "12: {...}" after "Global step ".
  bool openrlhf(std::string_view s, uint64_t number) {
    int64_t step = 0;
    size_t digits = leading_int(s, step);
    if (digits == 0 || !starts_with(s.substr(digits), ": {")) return false;
    return dict_at(s.substr(digits + 2), number, step, "openrlhf");
  }

  // "20, eval_metrics: {...}" after "global_step ".
  bool openrlhf_eval(std::string_view s, uint64_t number) {
    int64_t step = 0;
    size_t digits = leading_int(s, step);
    size_t at = s.find(": {");
    if (digits == 0 || at == std::string_view::npos) return false;
    return dict_at(s.substr(at + 2), number, step, "openrlhf");
  }

  bool dict_at(std::string_view s, uint64_t number, int64_t step, const char* kind) {
    s = trim(s);
    ParseError error;
    if (!parse_flat_object(s, record_, error)) {
      context_.diagnose("malformed_dict", number,
                        std::string(kind) + " metrics dict is malformed at column " +
                            std::to_string(error.offset + 1) + ": " + error.message);
      return true;  // recognised, but broken: reported, not retried as other shapes
    }
    ++kinds_[kind];
    records_.wide(record_, number, step);
    return true;
  }

  void hf_dict(std::string_view s, uint64_t number) {
    ParseError error;
    if (!parse_flat_object(s, record_, error)) {
      context_.diagnose("malformed_dict", number,
                        "metrics dict is malformed at column " + std::to_string(error.offset + 1) + ": " +
                            error.message);
      return;
    }
    if (RecordInterpreter::is_long_form(record_)) {
      ++kinds_["json events"];
      records_.long_form(record_, number);
      return;
    }
    bool has_step = false, eval = false, summary = false;
    for (const auto& f : record_.fields) {
      std::string_view key = record_.key(f);
      has_step = has_step || records_.role(key) == FieldRole::step;
      eval = eval || starts_with(key, "eval_");
      summary = summary || key == "train_runtime";
    }
    ++kinds_["hf-dict"];
    hf_has_step_ = hf_has_step_ || has_step;
    if (!has_step && !eval && !summary) ++hf_index_;
    records_.wide(record_, number, hf_index_);
  }

  void key_values(std::string_view s, uint64_t number) {
    record_.clear();
    size_t i = 0;
    while (i < s.size()) {
      // A key starts at a letter or '_' that follows a separator.
      if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_') ||
          (i > 0 && is_key_char(s[i - 1]))) {
        ++i;
        continue;
      }
      size_t k = i;
      while (k < s.size() && is_key_char(s[k])) ++k;
      if (k >= s.size() || s[k] != '=') {
        i = k;
        continue;
      }
      size_t v = k + 1;
      size_t e = v;
      while (e < s.size() && s[e] != ' ' && s[e] != ',' && s[e] != ';' && s[e] != '|' && s[e] != '\t') ++e;
      double value = 0;
      if (parse_number(s.substr(v, e - v), value)) add_number(s.substr(i, k - i), value);
      i = e;
    }
    bool metric = false, has_step = false;
    for (const auto& f : record_.fields) {
      bool step = records_.role(record_.key(f)) == FieldRole::step;
      has_step = has_step || step;
      metric = metric || !step;
    }
    if (!metric) return;
    ++kinds_["key=value"];
    auto step = records_.wide(record_, number, has_step ? std::nullopt : std::optional<int64_t>(kv_next_step_));
    if (step) kv_next_step_ = *step + 1;
  }

  void add_scalar(std::string_view key, std::string_view value_text) {
    LenientParser parser(value_text);
    ValueKind kind;
    double number = 0;
    std::string_view str;
    size_t arena_before = record_.arena.size();
    if (!parser.scalar(record_, kind, number, str) || kind == ValueKind::string) {
      record_.arena.resize(arena_before);
      return;
    }
    parser.skip_space();
    if (!parser.at_end()) {
      record_.arena.resize(arena_before);
      return;
    }
    FlatField f{};
    f.key_begin = static_cast<uint32_t>(record_.arena.size());
    record_.arena.append(key);
    f.key_len = static_cast<uint32_t>(key.size());
    f.kind = kind;
    f.number = number;
    record_.fields.push_back(f);
  }

  void add_number(std::string_view key, double value) {
    FlatField f{};
    f.key_begin = static_cast<uint32_t>(record_.arena.size());
    record_.arena.append(key);
    f.key_len = static_cast<uint32_t>(key.size());
    f.kind = ValueKind::number;
    f.number = value;
    record_.fields.push_back(f);
  }

  ReadContext& context_;
  RecordInterpreter records_;
  FlatRecord record_;
  std::string clean_;
  std::map<std::string, uint64_t> kinds_;
  int64_t hf_index_ = 0;
  bool hf_has_step_ = false;
  int64_t kv_next_step_ = 0;
};

}  // namespace

std::unique_ptr<LineFormat> make_console_format(ReadContext& context) {
  return std::make_unique<ConsoleFormat>(context);
}

}  // namespace rldk::io
