// tqdm counters: the step of HF dicts, and tqdm postfix values (see TqdmSteps in console_shapes.h).
#include <algorithm>
#include <cmath>

#include "io/console_shapes.h"

namespace rldk::io::console {
namespace {

// A bar that has advanced between this many training dicts is the training bar even when complete (the last dict
// of a run comes at n == total); a complete bar with fewer is a finished loop (model loading, an evaluation).
constexpr uint64_t VOTES_OF_A_COMPLETE_TRAINING_BAR = 2;

}  // namespace

void TqdmSteps::observe(std::string_view s) {
  if (s.find(" [") == std::string_view::npos) return;
  for_each_tqdm_counter(s, [&](const Counter& c, size_t, size_t) {
    if (c.total <= 0) return;  // a bar without a total counts no training loop of known length
    ++observations_;
    auto it = std::find_if(tracks_.begin(), tracks_.end(), [&](const Track& t) { return t.total == c.total; });
    if (it == tracks_.end()) {
      if (tracks_.size() == MAX_TOTALS) {
        tracks_.erase(std::min_element(tracks_.begin(), tracks_.end(),
                                       [](const Track& a, const Track& b) { return a.seen < b.seen; }));
      }
      tracks_.push_back(Track{c.total});
      it = tracks_.end() - 1;
    }
    it->last_n = c.n;
    it->seen = observations_;
  });
}

// The running bar that advanced between training dicts most often; among equals, the one drawn last.
const TqdmSteps::Track* TqdmSteps::training() const {
  const Track* best = nullptr;
  for (const auto& t : tracks_) {
    bool eligible = t.last_n < t.total || t.votes >= VOTES_OF_A_COMPLETE_TRAINING_BAR;
    if (!eligible) continue;
    if (best == nullptr || t.votes > best->votes || (t.votes == best->votes && t.seen > best->seen)) best = &t;
  }
  return best;
}

std::optional<Counter> TqdmSteps::at_training_dict() {
  for (auto& t : tracks_) {
    if (t.last_n > std::max<int64_t>(t.n_at_last_dict, 0)) ++t.votes;
    t.n_at_last_dict = t.last_n;
  }
  const Track* t = training();
  if (t == nullptr) return std::nullopt;
  return Counter{t->last_n, t->total};
}

int64_t TqdmSteps::count_of(int64_t total) const {
  for (const auto& t : tracks_) {
    if (t.total == total) return t.last_n;
  }
  return 0;
}

Match TqdmSteps::postfix(std::string_view s, FlatRecord& record) {
  if (s.find('=') == std::string_view::npos || s.back() != ']') return {};
  Counter counter;
  size_t bracket = std::string_view::npos;
  for_each_tqdm_counter(s, [&](const Counter& c, size_t, size_t open) {
    counter = c;
    bracket = open;
  });
  if (bracket == std::string_view::npos) return {};
  // "[elapsed<remaining, rate, key=value, key=value]"
  std::string_view inside = s.substr(bracket + 1, s.size() - bracket - 2);
  record.clear();
  size_t start = 0;
  for (;;) {
    size_t comma = inside.find(',', start);
    std::string_view item = trim(inside.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                                   : comma - start));
    size_t eq = item.find('=');
    double value = 0;
    if (eq != std::string_view::npos && eq > 0 && parse_number(trim(item.substr(eq + 1)), value)) {
      append_number(record, trim(item.substr(0, eq)), value);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (record.fields.empty()) return {};
  if (last_postfix_n_ == counter.n) return Match::of(Match::Kind::consumed);  // a redraw of the same count
  last_postfix_n_ = counter.n;
  return Match::record_of(Shape::tqdm_postfix, StepFrom::tqdm, counter.n);
}

}  // namespace rldk::io::console
