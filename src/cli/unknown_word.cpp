#include "unknown_word.h"

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/suggest.h"

namespace rldk::cli {
namespace {

// A whole misspelt command ("moniter", "evals list-suite") is further from its name than a typo in a rule
// expression; three edits still keep unrelated words apart.
constexpr size_t MAX_COMMAND_DISTANCE = 3;

// "rldk evals": the root is named rldk whatever argv[0] was (the parser names it after the path it was run by).
std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    std::string name = a->get_parent() == nullptr ? "rldk" : a->get_name();
    path = path.empty() ? name : name + " " + path;
  }
  return path;
}

std::vector<std::string> visible_subcommands(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    names.push_back(sub->get_name());
    for (const auto& alias : sub->get_aliases()) names.push_back(alias);
  }
  return names;
}

// Every long and short name of the options of `app` (and of the parents it falls through to).
std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* opt : a->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
    if (!a->get_fallthrough()) break;
  }
  return names;
}

const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    if (const CLI::Option* opt = a->get_option_no_throw(name)) return opt;
    if (!a->get_fallthrough()) break;
  }
  return nullptr;
}

// The subcommand named `word` (or having it as an alias), hidden ones included; nullptr if none.
const CLI::App* find_subcommand(const CLI::App* app, const std::string& word) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(word)) return sub;
  }
  return nullptr;
}

std::string nearest(const std::string& word, const std::vector<std::string>& names) {
  std::vector<std::string_view> views(names.begin(), names.end());
  return std::string(closest_name(word, views, MAX_COMMAND_DISTANCE));
}

}  // namespace

bool explain_unknown_word(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* current = &app;
  bool positional_taken = false;  // the current command has taken a positional word already
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return false;
    // A negative number is a value (--reward-range -1 1), not an option.
    bool number = arg.size() > 1 && arg[0] == '-' && (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
    if (arg.size() > 1 && arg[0] == '-' && !number) {
      std::string name = arg.substr(0, arg.find('='));
      if (name.size() > 2 && name[1] != '-') name = name.substr(0, 2);  // -o VALUE written as -oVALUE
      const CLI::Option* opt = find_option(current, name);
      if (opt == nullptr) {
        std::string suggestion = nearest(name, option_names(current));
        std::fprintf(stderr, "%s: unknown option '%s'%s (see `%s --help`)\n", command_path(current).c_str(),
                     name.c_str(), suggestion.empty() ? "" : ("; did you mean '" + suggestion + "'?").c_str(),
                     command_path(current).c_str());
        return true;
      }
      // An option's value is the next word unless it came with '=' or the option is a flag.
      if (arg.find('=') == std::string::npos && opt->get_expected_min() > 0 && i + 1 < argc) ++i;
      continue;
    }
    if (const CLI::App* sub = find_subcommand(current, arg)) {
      current = sub;
      positional_taken = false;
      continue;
    }
    std::vector<std::string> subs = visible_subcommands(current);
    bool takes_positionals = false;
    for (const CLI::Option* opt : current->get_options()) takes_positionals = takes_positionals || opt->get_positional();
    if (!subs.empty() && (!takes_positionals || positional_taken || current->get_require_subcommand_min() > 0)) {
      std::string suggestion = nearest(arg, subs);
      std::string where = current == &app ? "an rldk command" : "a command of `" + command_path(current) + "`";
      std::fprintf(stderr, "%s: '%s' is not %s%s (see `%s --help`)\n", command_path(current).c_str(), arg.c_str(),
                   where.c_str(), suggestion.empty() ? "" : ("; did you mean '" + suggestion + "'?").c_str(),
                   command_path(current).c_str());
      return true;
    }
    positional_taken = true;
  }
  return false;
}

}  // namespace rldk::cli
