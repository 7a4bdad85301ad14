#include "io/run_settings.h"

#include <cmath>

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
// command-line "--key", spaces alone), spaces and an opening quote, then the number, which must end there.
std::string_view value_after_key(std::string_view text, size_t pos, bool command_line) {
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
  while (pos < text.size() && number_char(text[pos])) ++pos;
  if (pos < text.size() && identifier_char(text[pos])) return {};  // 0.05abc, ${...}, a name
  return text.substr(begin, pos - begin);
}

bool finite_number(std::string_view text) {
  double value = 0;
  return !text.empty() && parse_number(text, value) && std::isfinite(value);
}

}  // namespace

void find_settings_in_text(std::string_view text, const MetricDictionary& dictionary, const SettingFound& found) {
  for (const SettingInfo& setting : dictionary.settings()) {
    for (const std::string& alias : setting.aliases) {
      for (size_t at = text.find(alias); at != std::string_view::npos; at = text.find(alias, at + 1)) {
        if (at > 0 && identifier_char(text[at - 1])) continue;
        size_t end = at + alias.size();
        if (end < text.size() && identifier_char(text[end])) continue;
        bool command_line = at >= 2 && text.substr(at - 2, 2) == "--";
        std::string_view number = value_after_key(text, end, command_line);
        if (finite_number(number)) found(setting, number);
      }
    }
  }
}

void find_settings_in_meta(std::string_view key, std::string_view value, const MetricDictionary& dictionary,
                           const SettingFound& found) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\n')) value.remove_suffix(1);
  if (const SettingInfo* setting = dictionary.setting_for_key(key)) {
    if (finite_number(value)) found(*setting, value);
    return;
  }
  if (value.empty() || value.front() != '{' || value.size() > MAX_CONFIG_VALUE) return;
  // Cheap refusal first: most config values name no setting.
  bool mentions = false;
  for (const SettingInfo& setting : dictionary.settings()) {
    for (const std::string& alias : setting.aliases) mentions = mentions || value.find(alias) != std::string_view::npos;
  }
  if (!mentions) return;
  FlatRecord record;
  ParseError error;
  if (!parse_flat_object(value, record, error)) return;
  for (const FlatField& f : record.fields) {
    if (f.kind != ValueKind::number || !std::isfinite(f.number)) continue;
    const SettingInfo* setting = dictionary.setting_for_key(record.key(f));
    if (setting == nullptr) continue;
    found(*setting, format_double(f.number));
  }
}

}  // namespace rldk::io
