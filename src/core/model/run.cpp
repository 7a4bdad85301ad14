#include "rldk/run.h"

#include <algorithm>
#include <cmath>

namespace rldk {

size_t Series::non_finite_count() const {
  return static_cast<size_t>(std::count_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }));
}

size_t Series::first_non_finite() const {
  auto it = std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
  return static_cast<size_t>(it - values.begin());
}

const Series* Run::find(const std::string& canonical_name) const {
  auto it = series.find(canonical_name);
  return it == series.end() ? nullptr : &it->second;
}

int64_t Run::first_step() const {
  bool any = false;
  int64_t best = 0;
  for (const auto& [name, s] : series) {
    for (int64_t step : s.steps) {
      if (!any || step < best) best = step;
      any = true;
    }
  }
  return best;
}

int64_t Run::last_step() const {
  bool any = false;
  int64_t best = 0;
  for (const auto& [name, s] : series) {
    for (int64_t step : s.steps) {
      if (!any || step > best) best = step;
      any = true;
    }
  }
  return best;
}

uint64_t Run::point_count() const {
  uint64_t n = 0;
  for (const auto& [name, s] : series) n += s.size();
  return n;
}

}  // namespace rldk
