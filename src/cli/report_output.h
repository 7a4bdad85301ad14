// How commands put results on the screen and on disk, in one place: text is printed whole (a NUL in a metric name
// does not cut it; the terminal guard installed by main() shows it as \x00), and report folders are refused when
// they would overwrite or land inside what the command reads, then written file by file atomically.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rldk::cli {

void print_text(std::FILE* out, std::string_view text);

struct ReportFile {
  std::string name;  // file name inside the folder
  std::string text;
};

// Writes `files` into folder `dir` (created if missing). On failure prints "COMMAND: <why>" to stderr and returns
// false; the caller exits 2. `inputs` are the paths the command read.
bool write_report_folder(const char* command, const std::string& dir, const std::vector<std::string>& inputs,
                         const std::vector<ReportFile>& files);

}  // namespace rldk::cli
