#include "rldk/script_path.h"

#include <filesystem>

namespace rldk {

std::string with_absolute_script(const std::string& command, const std::string& launch_dir) {
  namespace fs = std::filesystem;
  size_t pos = 0;
  while (pos < command.size()) {
    while (pos < command.size() && command[pos] == ' ') ++pos;
    size_t end = command.find(' ', pos);
    if (end == std::string::npos) end = command.size();
    std::string word = command.substr(pos, end - pos);
    // Words with quotes or shell syntax are left alone: only plain relative paths are rewritten.
    bool plain = !word.empty() && word.find_first_of("'\"$`\\;|&<>(){}*?~=") == std::string::npos && word[0] != '/' &&
                 word[0] != '-';
    if (plain && (word.ends_with(".py") || word.ends_with(".sh"))) {
      std::error_code ec;
      fs::path full = fs::absolute(fs::path(launch_dir) / word, ec).lexically_normal();
      if (!ec && fs::is_regular_file(full, ec)) {
        std::string path = full.string();
        if (path.find_first_of(" '\"$`\\") != std::string::npos) {
          std::string quoted = "'";
          for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
          path = quoted + "'";
        }
        return command.substr(0, pos) + path + command.substr(end);
      }
      return command;
    }
    pos = end;
  }
  return command;
}

}  // namespace rldk
