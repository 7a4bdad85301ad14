#include "io/run_settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "io/lenient_json.h"
#include "model/json_text.h"

namespace rldk::io {
namespace {

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool number_char(char c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
}

// A JSON config value larger than this is not a config (W&B stores tables and media elsewhere).
constexpr size_t MAX_CONFIG_VALUE = 1 << 20;

// The number after a settings key that ends at `pos`, or empty: a closing quote, then ':' or '=' (or, after a
// command-line "--key", spaces alone), spaces and an opening quote, then the number, which must end there. With
// `words`, a word there (True, steps) is the value too.
std::string_view value_after_key(std::string_view text, size_t pos, bool command_line, bool words = false) {
  if (pos < text.size() && (text[pos] == '\'' || text[pos] == '"')) ++pos;
  size_t spaces = pos;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  bool separated = pos > spaces && command_line;
  if (pos < text.size() && (text[pos] == ':' || text[pos] == '=')) {
    ++pos;
    separated = true;
  }
  if (!separated) return {};
  while (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos < text.size() && (text[pos] == '\'' || text[pos] == '"')) ++pos;
  size_t begin = pos;
  if (words && pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) {
    while (pos < text.size() && identifier_char(text[pos])) ++pos;
    return text.substr(begin, pos - begin);
  }
  while (pos < text.size() && number_char(text[pos])) ++pos;
  if (pos < text.size() && identifier_char(text[pos])) return {};  // 0.05abc, ${...}, a name
  return text.substr(begin, pos - begin);
}

// Where `alias` (lower case, as the dictionary holds it) next occurs in `text` from `from` on, in any case: meta keys
// are matched folded (MetricDictionary::setting_for_key), so a printed Entropy_Coeff is the same key.
size_t find_folded(std::string_view text, std::string_view alias, size_t from) {
  if (from > text.size()) return std::string_view::npos;
  auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
  };
  auto at = std::search(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(), alias.begin(), alias.end(), same);
  return at == text.end() ? std::string_view::npos : static_cast<size_t>(at - text.begin());
}

bool finite_number(std::string_view text, double& value) {
  return !text.empty() && parse_number(text, value) && std::isfinite(value);
}

}  // namespace

void find_settings_in_text(std::string_view text, const MetricDictionary& dictionary, const SettingFound& found,
                           const CodeVariables* variables) {
  // Every match, then reported in the order printed, so that the last value on the line is the one that stays.
  struct Hit {
    size_t at;
    const SettingInfo* setting;
    double value;
  };
  std::vector<Hit> hits;
  for (const SettingInfo& setting : dictionary.settings()) {
    for (const std::string& alias : setting.aliases) {
      for (size_t at = find_folded(text, alias, 0); at != std::string_view::npos; at = find_folded(text, alias, at + 1)) {
        if (at > 0 && identifier_char(text[at - 1])) continue;
        size_t end = at + alias.size();
        if (end < text.size() && identifier_char(text[end])) continue;
        bool command_line = at >= 2 && text.substr(at - 2, 2) == "--";
        double value = 0;
        if (finite_number(value_after_key(text, end, command_line), value)) {
          hits.push_back({at, &setting, value});
        } else if (variables != nullptr) {
          auto named = variables->find(value_after_key(text, end, command_line, true));
          if (named != variables->end()) hits.push_back({at, &setting, named->second});
        }
      }
    }
  }
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.at < b.at; });
  // The number as rldk prints numbers: a value printed with a million digits is not kept as it was printed.
  for (const Hit& h : hits) found(*h.setting, format_double(h.value));
}

void record_code_assignment(std::string_view line, CodeVariables& variables) {
  auto skip_spaces = [&](size_t pos) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    return pos;
  };
  size_t begin = skip_spaces(0), pos = begin;
  if (pos >= line.size() || std::isdigit(static_cast<unsigned char>(line[pos]))) return;
  while (pos < line.size() && identifier_char(line[pos])) ++pos;
  std::string_view name = line.substr(begin, pos - begin);
  pos = skip_spaces(pos);
  if (name.empty() || pos >= line.size() || line[pos] != '=' || (pos + 1 < line.size() && line[pos + 1] == '=')) return;
  pos = skip_spaces(pos + 1);
  size_t number_begin = pos;
  while (pos < line.size() && (number_char(line[pos]) || line[pos] == '_')) ++pos;
  std::string number(line.substr(number_begin, pos - number_begin));
  number.erase(std::remove(number.begin(), number.end(), '_'), number.end());  // Python's 5_000
  pos = skip_spaces(pos);
  double value = 0;
  if ((pos < line.size() && line[pos] != '#' && line[pos] != '\r') || !finite_number(number, value)) return;
  auto known = variables.find(name);
  if (known != variables.end()) {
    known->second = value;
  } else if (variables.size() < MAX_CODE_VARIABLES) {
    variables.emplace(std::string(name), value);
  }
}

std::string_view printed_value(std::string_view text, std::string_view key) {
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    if (at > 0 && (identifier_char(text[at - 1]) || text[at - 1] == '.')) continue;
    size_t end = at + key.size();
    if (end < text.size() && identifier_char(text[end])) continue;
    std::string_view value = value_after_key(text, end, at >= 2 && text.substr(at - 2, 2) == "--", true);
    if (!value.empty()) return value;
  }
  return {};
}

void find_settings_in_meta(std::string_view key, std::string_view value, const MetricDictionary& dictionary,
                           const SettingFound& found) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\n')) value.remove_suffix(1);
  if (const SettingInfo* setting = dictionary.setting_for_key(key)) {
    double number = 0;
    if (finite_number(value, number)) found(*setting, format_double(number));
    return;
  }
  // A JSON object (a W&B config value): its nested keys are read as text, "entropy_coeff": 0.05. Flattening it
  // would copy each key's whole path, which a hostile config can make quadratic in its size.
  if (value.empty() || value.front() != '{' || value.size() > MAX_CONFIG_VALUE) return;
  find_settings_in_text(value, dictionary, found);
}

}  // namespace rldk::io
