#include "act/monitor_outputs.h"

#include <filesystem>

#include "rldk/output_file.h"

namespace rldk::act {
namespace fs = std::filesystem;
namespace {

fs::path normal_absolute(const std::string& p) {
  std::error_code ec;
  fs::path n = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (ec) n = fs::absolute(p, ec).lexically_normal();
  if (!n.has_filename() && n != n.root_path()) n = n.parent_path();
  return n;
}

// An input that does not exist yet, compared by name: the device-and-inode guard cannot see it.
bool same_or_inside_by_name(const std::string& output, const std::string& input) {
  fs::path out = normal_absolute(output), in = normal_absolute(input);
  if (out == in) return true;
  fs::path rel = out.lexically_relative(in);
  return !rel.empty() && rel != "." && *rel.begin() != "..";
}

}  // namespace

Status check_monitor_outputs(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs,
                             const std::string& option) {
  for (const auto& output : outputs) {
    if (Status s = check_output_outside_inputs(output, inputs); !s.ok()) {
      return Error{ErrorCode::invalid_argument, option + ": " + s.error().message, output};
    }
    for (const auto& input : inputs) {
      std::error_code ec;
      if (input == "-" || fs::exists(input, ec)) continue;
      if (same_or_inside_by_name(output, input)) {
        return Error{ErrorCode::invalid_argument,
                     option + ": output is the input " + input + ", which the monitor would read back as metrics. "
                              "Write it somewhere else",
                     output};
      }
    }
  }
  return Ok{};
}

}  // namespace rldk::act
