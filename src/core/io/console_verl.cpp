// verl's console logger: "step:71 - actor/entropy:0.119 - critic/vf_loss:np.float64(0.007) - ...".
#include "io/console_shapes.h"

namespace rldk::io::console {
namespace {

// Where the record starts: at a "step:N - " token that begins the line or follows a blank. What a launcher or a
// logger put before it is not part of it: a Slurm task label ("0: ", srun --label), a logging prefix
// ("2025-03-01 10:00:00,123 - INFO - "), a rank tag ("[rank0]: ").
size_t record_start(std::string_view s) {
  for (size_t p = s.find("step:"); p != std::string_view::npos; p = s.find("step:", p + 1)) {
    if (p > 0 && s[p - 1] != ' ' && s[p - 1] != '\t') continue;
    size_t digits = p + 5;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
    if (digits > p + 5 && s.substr(digits, 3) == " - ") return p;
  }
  return std::string_view::npos;
}

}  // namespace

Match parse_verl(std::string_view s, FlatRecord& record) {
  size_t start = record_start(s);
  if (start == std::string_view::npos) return {};
  s.remove_prefix(start);
  record.clear();
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
    append_scalar(record, item.substr(0, colon), item.substr(colon + 1));
  }
  drop_nulls(record);
  if (record.fields.empty()) return {};
  return Match::record_of(Shape::verl, StepFrom::field);
}

}  // namespace rldk::io::console
