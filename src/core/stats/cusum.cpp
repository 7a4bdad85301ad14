#include "stats/cusum.h"

#include <algorithm>

namespace rldk::stats {

void Cusum::update(double z, double k, int64_t step) {
  if (up <= k) up_start = step;
  if (down <= k) down_start = step;
  up = std::max(0.0, up + z - k);
  down = std::max(0.0, down - z - k);
}

void PageHinkley::update(double z, double delta, double alpha) {
  ++count;
  mean += (z - mean) / static_cast<double>(count);
  up = std::max(0.0, alpha * up + (z - mean - delta));
  down = std::max(0.0, alpha * down + (mean - z - delta));
}

}  // namespace rldk::stats
