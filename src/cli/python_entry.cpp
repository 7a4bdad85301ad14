#include "python_entry.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"

namespace rldk::cli {

int exec_python_module(const char* me, const std::string& module, const std::vector<std::string>& args,
                       const char* needs) {
  std::string python = std::getenv("RLDK_PYTHON") ? std::getenv("RLDK_PYTHON") : "";
  if (python.empty()) {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    auto beside = self.parent_path() / "python3";
    python = !ec && std::filesystem::exists(beside, ec) ? beside.string() : "python3";
  }
  std::vector<std::string> words{python, "-m", module};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& w : words) cargv.push_back(w.data());
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  ::execvp(python.c_str(), cargv.data());
  std::fprintf(stderr, "%s: needs %s; cannot run %s\n", me, needs, python.c_str());
  return EXIT_INPUT_ERROR;
}

}  // namespace rldk::cli
