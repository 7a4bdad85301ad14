// tqdm counters: the step of HF dicts, and tqdm postfix values (see TqdmSteps in console_shapes.h).
#include <algorithm>
#include <cmath>

#include "io/console_shapes.h"

namespace rldk::io::console {
namespace {

// A bar that has advanced between this many training dicts is the training bar even when complete (the last dict
// of a run comes at n == total); a complete bar with fewer is a finished loop (model loading, an evaluation).
constexpr uint64_t VOTES_OF_A_COMPLETE_TRAINING_BAR = 2;

// A counter this large counts no loop (a hash, a byte count): it would overflow the steps a restarting bar adds up.
bool is_progress(const Counter& c) { return c.total > 0 && c.total <= MAX_COUNTER && c.n >= 0 && c.n <= MAX_COUNTER; }

// A bar whose rate counts dataset items ("Map: 86%|...| 17289/19996 [01:20<00:12, 215.55 examples/s]", HF datasets'
// map and filter) processes data, not optimizer steps: an interrupted map left at 17,289 of 19,996 was taken for the
// training counter of a run whose training bar was off, and its dicts were dated 67 .. 55,671 instead of 1 .. 3,480.
bool counts_data_items(std::string_view s, size_t bracket) {
  size_t close = s.find(']', bracket);
  std::string_view inside = s.substr(bracket, close == std::string_view::npos ? std::string_view::npos : close - bracket);
  return inside.find(" examples/s") != std::string_view::npos || inside.find(" ba/s") != std::string_view::npos;
}

}  // namespace

void TqdmSteps::observe(std::string_view s) {
  if (s.find(" [") == std::string_view::npos) return;
  for_each_tqdm_counter(s, [&](const Counter& c, size_t, size_t bracket) {
    if (!is_progress(c)) return;  // a bar without a total counts no training loop of known length
    if (counts_data_items(s, bracket)) return;
    ++observations_;
    Track* t = track_of(c.total);
    if (t == nullptr) {
      if (tracks_.size() == MAX_TOTALS) {
        // The stalest bar that keeps nothing a later record needs (a restarting bar's offset, a decided role).
        auto victim = std::min_element(tracks_.begin(), tracks_.end(), [this](const Track& x, const Track& y) {
          bool kx = x.keeps_state() || holds(x), ky = y.keeps_state() || holds(y);
          return kx != ky ? !kx : x.seen < y.seen;
        });
        if (holds(*victim)) decide(*victim, Role::loop);
        tracks_.erase(victim);
      }
      t = &tracks_.emplace_back();
      t->total = c.total;
      t->run_began = observations_;
    } else if (c.n < t->last_n) {
      // A new run starts from 0 (or 1, its first drawing missed), or after the last one completed. A count that
      // steps back a little is ranks drawing one bar out of step: no restart, and the bar keeps its count.
      if (c.n > 1 && t->last_n < t->total) {
        t->seen = observations_;
        return;
      }
      if (t->offset <= MAX_COUNTER) t->offset += t->last_n;
      t->run_began = observations_;
      t->restarted = true;
    } else if (c.n > t->last_n) {
      t->moved = true;
    }
    t->last_n = c.n;
    t->seen = observations_;
  });
}

// The running bar that advanced between training dicts most often; among equals, the one drawn last.
const TqdmSteps::Track* TqdmSteps::training() const {
  // A trainer that draws a bar per update shows no training loop in its bars: the other bars it draws (vLLM's
  // "Processed prompts", standing incomplete across steps) count something else.
  if (inner_loops_) return nullptr;
  const Track* best = nullptr;
  for (const auto& t : tracks_) {
    bool eligible = t.last_n < t.total || t.votes >= VOTES_OF_A_COMPLETE_TRAINING_BAR;
    if (!eligible || t.inner) continue;
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
  if (t != nullptr && last_dict_observation_ && t->run_began > *last_dict_observation_ && last_dict_counter_ &&
      last_dict_counter_->n < last_dict_counter_->total && count_of(last_dict_counter_->total) == last_dict_counter_->n) {
    mark_inner(last_dict_counter_->total);
    t = training();
  }
  last_dict_observation_ = observations_;
  if (t == nullptr) {
    last_dict_counter_.reset();
    return std::nullopt;
  }
  last_dict_counter_ = Counter{t->last_n, t->total};
  return last_dict_counter_;
}

void TqdmSteps::mark_inner(int64_t total) {
  if (Track* t = track_of(total)) t->inner = true;
  inner_loops_ = true;
  inner_loop_found_ = true;
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

bool TqdmSteps::shares_names(const Track& a, const Track& b) const {
  return std::any_of(a.names.begin(), a.names.end(),
                     [&](const std::string& n) { return std::find(b.names.begin(), b.names.end(), n) != b.names.end(); });
}

bool TqdmSteps::holds(const Track& t) const {
  return std::any_of(held_.begin(), held_.end(), [&](const HeldPostfix& h) { return h.total == t.total; });
}

void TqdmSteps::emit(int64_t step, StepFrom from, const FlatRecord& record, uint64_t line) {
  offer_(Match::record_of(Shape::tqdm_postfix, from, step), record, line);
}

// Decides a nested bar: its held records are offered (the loop) or left out (covered by the bar around it).
void TqdmSteps::decide(Track& nested, Role role) {
  nested.role = role;
  std::deque<HeldPostfix> kept;
  for (auto& h : held_) {
    if (h.total != nested.total) {
      kept.push_back(std::move(h));
      continue;
    }
    held_bytes_ -= std::min(held_bytes_, h.record.arena.size() + h.record.fields.size() * sizeof(FlatField));
    if (role == Role::loop) {
      emit(h.step, StepFrom::tqdm, h.record, h.line);
    } else {
      ++nested_left_out_;
    }
  }
  held_ = std::move(kept);
}

// Every held record, in order: their bars are the loop.
void TqdmSteps::release_all() {
  for (auto& h : held_) {
    if (Track* t = track_of(h.total); t != nullptr) t->role = Role::loop;
    emit(h.step, StepFrom::tqdm, h.record, h.line);
  }
  held_.clear();
  held_bytes_ = 0;
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
  if (counter.n < 0 || counter.n > MAX_COUNTER || counter.total > MAX_COUNTER) return {};

  Track* bar = counter.total > 0 ? track_of(counter.total) : nullptr;
  if (bar == nullptr) {  // a bar without a total: its own count, no nesting
    if (last_untracked_n_ == counter.n) return Match::of(Match::Kind::consumed);  // a redraw of the same count
    last_untracked_n_ = counter.n;
    return Match::record_of(Shape::tqdm_postfix, StepFrom::tqdm, counter.n);
  }
  bar->postfix_now = true;
  for (const auto& f : record.fields) {
    std::string_view key = record.key(f);
    if (bar->names.size() < MAX_NAMES && std::find(bar->names.begin(), bar->names.end(), key) == bar->names.end()) {
      bar->names.emplace_back(key);
    }
  }
  // What this bar's postfix says about the bars nested in it that showed postfixes of their own.
  for (auto& t : tracks_) {
    if (t.role == Role::undecided && !t.names.empty() && nested_in(t, *bar)) {
      decide(t, shares_names(t, *bar) ? Role::covered : Role::loop);
    }
  }
  // At count 0 no iteration of this run has finished: values drawn there (a postfix set before the first update, an
  // initial postfix) are not a step's. The first update draws them again at count 1.
  if (counter.n == 0) return Match::of(Match::Kind::consumed);
  // A count behind the bar's own that started no new run: another rank's drawing, out of step.
  if (counter.n < bar->last_n) return Match::of(Match::Kind::consumed);
  int64_t step = bar->offset + counter.n;
  if (bar->last_postfix_step == step) return Match::of(Match::Kind::consumed);  // a redraw of the same count
  bar->last_postfix_step = step;
  if (bar->role == Role::covered) {
    ++nested_left_out_;
    return Match::of(Match::Kind::consumed);
  }
  // A loop runs inside this bar (its current run began after this bar's): this postfix is a summary taken at the
  // loop's current step, as an evaluation is, except for the metrics the loop logs itself.
  const Track* loop = nullptr;
  for (const auto& t : tracks_) {
    if (&t != bar && t.role == Role::loop && t.run_began > bar->run_began && (loop == nullptr || t.seen > loop->seen)) {
      loop = &t;
    }
  }
  if (loop != nullptr) {
    if (shares_names(*loop, *bar)) {
      ++nested_left_out_;
      return Match::of(Match::Kind::consumed);
    }
    return Match::record_of(Shape::tqdm_postfix, StepFrom::follows, loop->step());
  }
  bool nested = std::any_of(tracks_.begin(), tracks_.end(), [&](const Track& t) { return nested_in(*bar, t); });
  if (nested && bar->role == Role::undecided) {
    size_t bytes = record.arena.size() + record.fields.size() * sizeof(FlatField);
    if (held_.size() >= hold_limit_ || held_bytes_ + bytes > MAX_HELD_BYTES) release_all();
    if (bar->role == Role::undecided) {
      HeldPostfix& h = held_.emplace_back(HeldPostfix{bar->total, line, step, FlatRecord{}});
      h.record.fields = record.fields;
      h.record.arena = record.arena;
      held_bytes_ += bytes;
      return Match::of(Match::Kind::consumed);
    }
  }
  return Match::record_of(Shape::tqdm_postfix, StepFrom::tqdm, step);
}

void TqdmSteps::after_piece() {
  if (!held_.empty()) {
    for (const auto& outer : tracks_) {
      if (!outer.moved || outer.postfix_now) continue;
      // The bar around them moved on without a postfix of its own: the nested bars are the loop.
      for (auto& t : tracks_) {
        if (t.role == Role::undecided && nested_in(t, outer) && holds(t)) decide(t, Role::loop);
      }
    }
    // A nested bar that starts a new run while the bars around it stood still is the loop (an epoch bar that moves
    // once a run, or never in a single-epoch run).
    for (auto& t : tracks_) {
      if (t.restarted && t.role == Role::undecided && holds(t)) decide(t, Role::loop);
    }
  }
  for (auto& t : tracks_) t.moved = t.postfix_now = t.restarted = false;
}

void TqdmSteps::flush() { release_all(); }

}  // namespace rldk::io::console
