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
    Track* t = track_of(c.total);
    if (t == nullptr) {
      if (tracks_.size() == MAX_TOTALS) {
        tracks_.erase(std::min_element(tracks_.begin(), tracks_.end(),
                                       [](const Track& a, const Track& b) { return a.seen < b.seen; }));
      }
      t = &tracks_.emplace_back();
      t->total = c.total;
      t->run_began = observations_;
    } else if (c.n < t->last_n) {
      // A new run of the bar (the next epoch's batches, the next global step's micro-batches).
      t->offset += t->last_n;
      t->run_began = observations_;
    } else if (c.n > t->last_n) {
      t->moved = true;
    }
    t->last_n = c.n;
    t->seen = observations_;
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

TqdmSteps::Track* TqdmSteps::track_of(int64_t total) {
  auto it = std::find_if(tracks_.begin(), tracks_.end(), [&](const Track& t) { return t.total == total; });
  return it == tracks_.end() ? nullptr : &*it;
}

// `inner` began its current run while `outer` was running (drawn, not complete).
bool TqdmSteps::nested_in(const Track& inner, const Track& outer) const {
  return &inner != &outer && outer.last_n < outer.total && outer.run_began < inner.run_began;
}

Match TqdmSteps::postfix(std::string_view s, FlatRecord& record, uint64_t line) {
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

  Track* bar = counter.total > 0 ? track_of(counter.total) : nullptr;
  if (bar == nullptr) {  // a bar without a total: its own count, no nesting
    if (last_untracked_n_ == counter.n) return Match::of(Match::Kind::consumed);  // a redraw of the same count
    last_untracked_n_ = counter.n;
    return Match::record_of(Shape::tqdm_postfix, StepFrom::tqdm, counter.n);
  }
  // At count 0 no iteration of this run has finished: values drawn there (a postfix set before the first update, an
  // initial postfix) are not a step's. The first update draws them again at count 1.
  if (counter.n == 0) return Match::of(Match::Kind::consumed);
  int64_t step = bar->offset + counter.n;
  if (bar->last_postfix_step == step) return Match::of(Match::Kind::consumed);  // a redraw of the same count
  bar->last_postfix_step = step;
  bar->postfix_now = true;

  // This bar's postfix is the loop's record for every bar nested in it.
  for (auto& t : tracks_) {
    if (nested_in(t, *bar)) t.covered = true;
  }
  size_t before = held_.size();
  held_.erase(std::remove_if(held_.begin(), held_.end(),
                             [&](const HeldPostfix& h) {
                               const Track* t = track_of(h.total);
                               return t != nullptr && t->covered;
                             }),
              held_.end());
  nested_left_out_ += before - held_.size();
  if (bar->covered) {
    ++nested_left_out_;
    return Match::of(Match::Kind::consumed);
  }

  bool nested = std::any_of(tracks_.begin(), tracks_.end(), [&](const Track& t) { return nested_in(*bar, t); });
  if (nested && !bar->released) {
    if (held_.size() == MAX_HELD) release_held([](const Track&) { return true; });
    if (!bar->released) {
      HeldPostfix& h = held_.emplace_back(HeldPostfix{bar->total, line, step, FlatRecord{}});
      h.record.fields = record.fields;
      h.record.arena = record.arena;
      return Match::of(Match::Kind::consumed);
    }
  }
  return Match::record_of(Shape::tqdm_postfix, StepFrom::tqdm, step);
}

void TqdmSteps::release_held(const std::function<bool(const Track&)>& which) {
  std::deque<HeldPostfix> kept;
  for (auto& h : held_) {
    Track* t = track_of(h.total);
    if (t != nullptr && !which(*t)) {
      kept.push_back(std::move(h));
      continue;
    }
    if (t != nullptr) t->released = true;
    offer_(Match::record_of(Shape::tqdm_postfix, StepFrom::tqdm, h.step), h.record, h.line);
  }
  held_ = std::move(kept);
}

void TqdmSteps::after_piece() {
  for (const auto& outer : tracks_) {
    if (!outer.moved || outer.postfix_now || held_.empty()) continue;
    // The bar around them moved on without a postfix of its own: the nested bars' postfixes are the loop's records.
    release_held([&](const Track& t) { return nested_in(t, outer); });
  }
  for (auto& t : tracks_) t.moved = t.postfix_now = false;
}

void TqdmSteps::flush() { release_held([](const Track&) { return true; }); }

}  // namespace rldk::io::console
