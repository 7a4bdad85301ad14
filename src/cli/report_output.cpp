#include "report_output.h"

#include <filesystem>

#include "rldk/output_file.h"

namespace rldk::cli {

void print_text(std::FILE* out, std::string_view text) { std::fwrite(text.data(), 1, text.size(), out); }

bool write_report_folder(const char* command, const std::string& dir, const std::vector<std::string>& inputs,
                         const std::vector<ReportFile>& files) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", command, why.c_str());
    return false;
  };
  // Checked before the folder is created: a refused folder leaves nothing behind.
  for (const auto& file : files) {
    Status allowed = check_output_outside_inputs(fs::path(dir) / file.name, inputs);
    if (!allowed.ok()) return fail(to_string(allowed.error()));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(dir + ": cannot create the folder: " + ec.message());
  for (const auto& file : files) {
    Status written = write_file_atomic(fs::path(dir) / file.name, file.text);
    if (!written.ok()) return fail(to_string(written.error()));
  }
  return true;
}

}  // namespace rldk::cli
