// verl's console logger: "step:71 - actor/entropy:0.119 - critic/vf_loss:np.float64(0.007) - ...".
#include "io/console_shapes.h"

namespace rldk::io::console {

Match parse_verl(std::string_view s, FlatRecord& record) {
  if (!starts_with(s, "step:")) return {};
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
