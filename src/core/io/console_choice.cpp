#include "io/console_choice.h"

#include <algorithm>

namespace rldk::io::console {

std::string_view shape_name(Shape shape) {
  switch (shape) {
    case Shape::hf_dict: return "hf-dict";
    case Shape::openrlhf: return "openrlhf";
    case Shape::verl: return "verl";
    case Shape::step_dict: return "step-labelled dict";
    case Shape::key_value: return "key=value";
    case Shape::fields: return "key: value";
    case Shape::table: return "progress table";
    case Shape::tqdm_postfix: return "tqdm postfix";
    case Shape::stats_grid: return "stats grid";
    case Shape::step_block: return "step block";
    case Shape::phrases: return "`name is value` phrases";
  }
  return "?";
}

std::string_view step_from_phrase(StepFrom from) {
  switch (from) {
    case StepFrom::none: return "no step";
    case StepFrom::field: return "step from the step field";
    case StepFrom::label: return "step from the step label";
    case StepFrom::counter: return "step from `(n/N)`";
    case StepFrom::bracket: return "step from the leading `[n/N]`";
    case StepFrom::column: return "step from the Step column";
    case StepFrom::tqdm: return "step from the tqdm counter";
    case StepFrom::epoch: return "step from epoch x steps per epoch";
    case StepFrom::interval: return "step from log call x logging interval";
    case StepFrom::log_call: return "step from the log call index";
    case StepFrom::follows: return "step of the last training dict";
  }
  return "?";
}

ShapeChooser::ShapeChooser(RecordInterpreter& roles, Emit emit, ShapeChoiceOptions options)
    : roles_(roles), emit_(std::move(emit)), options_(options) {}

size_t ShapeChooser::slot_of(Shape shape, StepFrom from) {
  return static_cast<size_t>(shape) * 2 + (splits_stepless(shape) && !own_step(from) ? 1 : 0);
}

bool ShapeChooser::carries_step(size_t slot) const {
  const Stats& s = stats_[slot];
  uint64_t steppable = s.records - s.follows;
  return steppable > 0 && s.stepped * 2 > steppable && !restarts_often(slot);
}

// A step label that goes back three times or more, at one in ten of its changes or more, counts something other than
// the run's steps: the numbered steps of the model's own worked answers echoed into the log ("**Step 1: Calculate
// ...**", 1..5 and again 1..6 for every printed sample). A trainer restarts or resumes once or twice in a log.
bool ShapeChooser::restarts_often(size_t slot) const {
  const Stats& s = stats_[slot];
  return s.backwards >= MIN_RESTARTS && s.backwards * CHANGES_PER_RESTART >= s.steps_seen;
}

// A stepped shape has shown its steps once it was seen at decide_after_steps of them, and, for each time its step went
// back, at CHANGES_PER_RESTART more: a label that started over must show it goes on counting before it is trusted
// (answers echoed into the log show "Step 4", "Step 3", "Step 1" before they show three restarts).
bool ShapeChooser::counted_steps(size_t slot) const {
  const Stats& s = stats_[slot];
  return s.steps_seen >= options_.decide_after_steps + CHANGES_PER_RESTART * s.backwards;
}

bool ShapeChooser::weak(size_t slot) const {
  return !carries_step(slot) || shape_of(slot) == Shape::tqdm_postfix;
}

// A stepless free-text shape is a series only when it repeats, and repeats its names (ShapeChoiceOptions).
bool ShapeChooser::repeats(size_t slot) const {
  if (!splits_stepless(shape_of(slot)) || carries_step(slot)) return true;
  const Stats& s = stats_[slot];
  return s.records >= options_.min_stepless_records &&
         s.name_uses >= options_.min_uses_per_stepless_name * static_cast<uint64_t>(s.keys.size());
}

// Strictly better: printed more than once, carries its step, is not weak, has more distinct metrics, more lines,
// came first. A shape printed once is no series whatever step it carries: a DeepSpeed engine line "step=0,
// skipped=0, lr=[...]" at the start of a SimPO run is not the run's steps beside 94 HF dicts.
bool ShapeChooser::better(size_t a, size_t b) const {
  bool once_a = stats_[a].records < 2, once_b = stats_[b].records < 2;
  if (once_a != once_b) return once_b;
  if (carries_step(a) != carries_step(b)) return carries_step(a) ? !outweighs(b, a) : outweighs(a, b);
  if (weak(a) != weak(b)) return !weak(a);
  const Stats& x = stats_[a];
  const Stats& y = stats_[b];
  // Without steps, the metrics of a line: a series prints the same names on every line, while the model's answers
  // echoed into the log ("with \(n=19\) and \(k=9\)") read as many names, a few to a line.
  if (!carries_step(a) && !carries_step(b)) {
    uint64_t per_line_a = (x.name_uses + x.records / 2) / x.records, per_line_b = (y.name_uses + y.records / 2) / y.records;
    if (per_line_a != per_line_b) return per_line_a > per_line_b;
  }
  if (x.keys.size() != y.keys.size()) return x.keys.size() > y.keys.size();
  if (x.records != y.records) return x.records > y.records;
  return x.first_line < y.first_line;
}

// See the top of console_choice.h.
bool ShapeChooser::outweighs(size_t stepless, size_t stepped) const {
  const Stats& s = stats_[stepless];
  const Stats& t = stats_[stepped];
  if (!repeats(stepless)) return false;
  constexpr size_t METRICS_FACTOR = 2;
  constexpr uint32_t MIN_AGREEMENTS = 2;
  constexpr uint64_t REDRAWS_PER_STEP = 4;
  const Pace& p = pace_[stepped][stepless];
  bool companion = p.single > 0 && p.not_single == 0;
  if (shape_of(stepless) == Shape::hf_dict && !companion) {
    uint64_t stepped_since_dict = pace_[stepless][stepped].after_first;
    if (s.keys.size() >= METRICS_FACTOR * t.keys.size() && s.records * 2 >= stepped_since_dict) return true;
    if (shape_of(stepped) == Shape::tqdm_postfix && s.keys.size() * 2 >= t.keys.size() &&
        stepped_since_dict >= REDRAWS_PER_STEP * s.records) {
      return true;
    }
  }
  return p.agree >= MIN_AGREEMENTS && p.disagree == 0;
}

// Counts each slot's lines between the lines of every stepped slot, and judges the gap when a stepped line comes.
void ShapeChooser::pace(size_t slot, std::optional<int64_t> step) {
  for (size_t t = 0; t < SLOTS; ++t) {
    if (t == slot) continue;
    ++pace_[t][slot].since;
    if (stats_[t].records > 0) ++pace_[t][slot].after_first;
  }
  if (!step) return;
  std::optional<int64_t> previous = stats_[slot].last_step;
  for (size_t other = 0; other < SLOTS; ++other) {
    Pace& p = pace_[slot][other];
    if (other != slot && previous && *step - *previous >= 2 && p.since > 0) {
      (p.since == static_cast<uint64_t>(*step - *previous) ? p.agree : p.disagree) += 1;
    }
    if (other != slot && previous && stats_[other].records > 0) (p.since == 1 ? p.single : p.not_single) += 1;
    p.since = 0;
  }
}

size_t ShapeChooser::leader(bool strict) const {
  size_t best = NONE;
  for (size_t slot = 0; slot < SLOTS; ++slot) {
    const Stats& s = stats_[slot];
    if (s.records == 0) continue;
    // A free-text shape without steps that was printed once, or whose names do not repeat, is settings and prints,
    // not a series, and a step label that keeps starting over labels something else (strict: every choice but the
    // one a full look-ahead buffer forces).
    if (strict && (!repeats(slot) || restarts_often(slot))) continue;
    if (best == NONE || better(slot, best)) best = slot;
  }
  return best;
}

std::optional<int64_t> ShapeChooser::step_of(const Match& match, const FlatRecord& record) {
  if (match.step) return match.step;
  if (match.from != StepFrom::field) return std::nullopt;
  for (const auto& f : record.fields) {
    if (roles_.role(record.key(f)) != FieldRole::step) continue;
    double value = f.number;
    int64_t step = 0;
    if ((f.kind == ValueKind::number || (f.kind == ValueKind::string && parse_number(record.str(f), value))) &&
        step_from_number(value, step)) {
      return step;
    }
  }
  return std::nullopt;
}

void ShapeChooser::count(size_t slot, const Match& match, const FlatRecord& record, uint64_t line) {
  Stats& s = stats_[slot];
  if (s.records++ == 0) s.first_line = line;
  if (own_step(match.from)) ++s.stepped;
  if (match.from == StepFrom::follows) ++s.follows;
  ++s.from[static_cast<size_t>(match.from)];
  auto step = step_of(match, record);
  pace(slot, own_step(match.from) ? step : std::nullopt);
  if (step && step != s.last_step) {
    ++s.steps_seen;
    if (s.last_step && *step < *s.last_step) ++s.backwards;
    s.last_step = step;
  }
  for (const auto& f : record.fields) {
    std::string_view key = record.key(f);
    if (roles_.role(key) != FieldRole::metric) continue;
    scratch_.assign(key);
    ++s.name_uses;
    if (s.keys.size() < options_.max_tracked_keys) s.keys.insert(scratch_);
  }
}

bool ShapeChooser::room() const {
  return held_.size() < options_.max_buffered_records && held_bytes_ < options_.max_buffered_bytes;
}

void ShapeChooser::hold(size_t slot, const Match& match, std::optional<int64_t> step, const FlatRecord& record,
                        uint64_t line) {
  Held& h = held_.emplace_back(Held{slot, match.from, step, line, FlatRecord{}});
  h.record.fields = record.fields;
  h.record.arena = record.arena;
  held_bytes_ += sizeof(Held) + record.arena.size() + record.fields.size() * sizeof(FlatField);
}

void ShapeChooser::offer(const Match& match, const FlatRecord& record, uint64_t line) {
  size_t slot = slot_of(match.shape, match.from);
  count(slot, match, record, line);
  std::optional<int64_t> step = match.step;
  if (!step && match.from == StepFrom::none) step = static_cast<int64_t>(++stats_[slot].numbered);

  if (winner_ == NONE && !room()) {
    // The look-ahead is full: decide now, with what repeats if anything does, or else with what leads (memory
    // stays bounded).
    size_t best = leader(true);
    decide(best != NONE ? best : leader(false), line);
  }
  if (winner_ == NONE) {
    hold(slot, match, step, record, line);
    size_t best = leader(true);
    if (best == NONE) return;
    // A weak leader leads a strong shape only when it outweighs it (better()).
    if (!weak(best) && counted_steps(best)) {
      decide(best, line);
    } else if (weak(best) && stats_[best].records >= options_.decide_weak_after_records) {
      decide(best, line);
    }
    return;
  }
  if (slot == winner_) {
    deliver_winner(match.from, step, record, line);
    return;
  }
  if (Companion* c = companion_of(slot, record)) {
    Held held{slot, match.from, step, line, FlatRecord{}};
    held.record.fields = record.fields;
    held.record.arena = record.arena;
    accept_companion(*c, std::move(held));
    return;
  }
  // A strong shape after a weak winner, or one that carries more metrics than a strong winner (a second training
  // stage printed another way: a custom SFT loop's "step 10/611 loss=..." lines, then TRL's GRPO dicts): held until
  // it has shown its steps, then it takes over.
  bool richer = carries_step(slot) && carries_step(winner_) && stats_[slot].keys.size() > stats_[winner_].keys.size();
  if (!weak(slot) && (weak(winner_) || richer) && !outweighs(winner_, slot)) {
    if (room()) hold(slot, match, step, record, line);
    if (counted_steps(slot)) decide(slot, line);
  }
}

void ShapeChooser::decide(size_t slot, uint64_t line) {
  if (slot == NONE) return;
  if (winner_ != NONE && winner_ != slot) {
    switched_at_ = line;
    for (const auto& h : held_) {
      if (h.slot == slot) {
        switched_at_ = h.line;
        break;
      }
    }
  }
  winner_ = slot;
  drop_pending();  // a switch: what the old winner's companions held is not the new one's
  last_step_.reset();
  // In printed order: a dict held for its step (HfSteps) is offered after lines printed below it, and a companion
  // goes with the winner line printed next to it.
  std::stable_sort(held_.begin(), held_.end(), [](const Held& a, const Held& b) { return a.line < b.line; });
  choose_companions();
  for (auto& h : held_) {
    if (h.slot == slot) {
      deliver_winner(h.from, h.step, h.record, h.line);
    } else if (Companion* c = companion_of(h.slot, h.record)) {
      accept_companion(*c, std::move(h));
    }
  }
  held_.clear();
  held_bytes_ = 0;
}

// A shape without steps of its own beside a winner that carries its steps, or beside a trainer's stepless dict (its
// lines are numbered 1, 2, ...). Free-text lines accompany by the names they print (`signature`): such a slot holds
// every stepless print of its shape (Open-Reasoner-Zero's "avg_raw_rewards: X, avg_kl: X, ..." before each dict,
// among hundreds of other `key: value` prints).
bool ShapeChooser::may_accompany(size_t slot) const {
  Shape shape = shape_of(slot);
  bool winner_steps = winner_ != NONE && ((carries_step(winner_) && !weak(winner_)) || shape_of(winner_) == Shape::hf_dict);
  return slot != winner_ && winner_steps && !carries_step(slot) && shape != Shape::tqdm_postfix &&
         stats_[slot].records > 0;
}

// The names a record prints, in order, as one number (0 is kept for "any record of the slot").
uint64_t ShapeChooser::signature(const FlatRecord& record) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: a compact name-set identity, not a security hash
  for (const auto& f : record.fields) {
    for (char c : record.key(f)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h = (h ^ 0xffU) * 1099511628211ULL;
  }
  return h == 0 ? 1 : h;
}

ShapeChooser::Companion* ShapeChooser::companion_of(size_t slot, const FlatRecord& record) {
  std::optional<uint64_t> sig;  // computed once, and only for a slot that has a free-text companion
  for (auto& c : companions_) {
    if (c.slot != slot) continue;
    if (c.signature == 0) return &c;
    if (!sig) sig = signature(record);
    if (*sig == c.signature) return &c;
  }
  return nullptr;
}

void ShapeChooser::drop_pending() {
  for (auto& c : companions_) {
    if (c.pending) ++c.dropped;
    c.pending.reset();
  }
}

// From the look-ahead: the stepless dict shapes, and the free-text prints of one name set, whose records strictly
// alternate with the winner's (at least two of each), and on which side of the winner's lines each is printed: the side its records sit nearer to, in lines summed
// over the records between two winner lines. Lines packed with nothing between them are on neither side: then a
// look-ahead that starts with a winner line reads "after" (every dict has a line before it), and one that starts
// with a dict could be either (a dict printed before the loop, then "after"), so there is no companion.
void ShapeChooser::choose_companions() {
  struct Candidate {
    Companion companion;
    size_t records, names;
    uint64_t nearest;
    std::vector<std::string> metrics;
  };
  std::vector<Candidate> candidates;
  companions_.clear();
  winner_metrics_.clear();
  constexpr size_t MAX_SIGNATURES = 64;  // distinct name sets tried per free-text slot
  for (size_t slot = 0; slot < SLOTS; ++slot) {
    if (!may_accompany(slot)) continue;
    // A dict shape accompanies as a whole; a free-text one by the lines of one name set.
    std::vector<uint64_t> signatures;
    if (!splits_stepless(shape_of(slot))) {
      signatures.push_back(0);
    } else {
      for (const auto& h : held_) {
        if (h.slot != slot) continue;
        uint64_t sig = signature(h.record);
        if (std::find(signatures.begin(), signatures.end(), sig) == signatures.end()) signatures.push_back(sig);
        if (signatures.size() == MAX_SIGNATURES) break;
      }
    }
    for (uint64_t sig : signatures) {
      size_t mine = 0, theirs = 0;
      bool alternates = true;
      std::optional<bool> last_was_mine, first_was_mine;
      std::optional<uint64_t> last_winner_line, pending_line;
      uint64_t gap_after = 0, gap_before = 0;  // to the winner line before / after each record between two of them
      const FlatRecord* first = nullptr;
      for (const auto& h : held_) {
        bool is_mine = h.slot == slot && (sig == 0 || signature(h.record) == sig);
        // An evaluation dict between two training dicts takes the step of the one before it: it is not a step line.
        if (!is_mine && (h.slot != winner_ || h.from == StepFrom::follows)) continue;
        if (is_mine && first == nullptr) first = &h.record;
        if (last_was_mine && *last_was_mine == is_mine) alternates = false;
        if (!first_was_mine) first_was_mine = is_mine;
        last_was_mine = is_mine;
        (is_mine ? mine : theirs) += 1;
        if (is_mine) {
          pending_line = last_winner_line ? std::optional<uint64_t>(h.line) : std::nullopt;
        } else {
          if (pending_line) {
            gap_after += *pending_line - *last_winner_line;
            gap_before += h.line - *pending_line;
          }
          pending_line.reset();
          last_winner_line = h.line;
        }
      }
      bool sided = first_was_mine && (gap_after != gap_before || !*first_was_mine);
      if (!alternates || mine < 2 || theirs < 2 || !sided || first == nullptr) continue;
      // A free-text print of one or two values beside each step line is a progress note ("running IoU=0.8" of an
      // evaluation under way, "accuracy: 0.9" under "Eval at step 3"); a summary prints several.
      constexpr size_t MIN_FREE_TEXT_NAMES = 3;
      if (sig != 0 && first->fields.size() < MIN_FREE_TEXT_NAMES) continue;
      Candidate c{Companion{slot, sig, gap_before < gap_after, {}, false, 0, 0}, mine, first->fields.size(),
                  std::min(gap_before, gap_after), {}};
      for (const auto& f : first->fields) c.metrics.push_back(roles_.canonical(first->key(f)));
      candidates.push_back(std::move(c));
    }
  }
  // The most records, then the most names on a line, then the lines printed nearest to the winner's; a family that
  // logs a metric an earlier one logs is left out (one value per step).
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.records != b.records) return a.records > b.records;
    if (a.names != b.names) return a.names > b.names;
    return a.nearest < b.nearest;
  });
  std::unordered_set<std::string> taken;
  for (auto& c : candidates) {
    if (companions_.size() == MAX_COMPANIONS) break;
    if (std::any_of(c.metrics.begin(), c.metrics.end(), [&](const std::string& m) { return taken.count(m) > 0; })) {
      continue;
    }
    taken.insert(c.metrics.begin(), c.metrics.end());
    companions_.push_back(std::move(c.companion));
  }
}

void ShapeChooser::deliver_winner(StepFrom from, std::optional<int64_t> step, const FlatRecord& record, uint64_t line) {
  if (from == StepFrom::follows) {  // an evaluation dict: no step line for a companion to go with
    emit_(shape_of(winner_), from, step, record, line);
    return;
  }
  if (!companions_.empty()) {
    for (const auto& f : record.fields) {
      if (roles_.role(record.key(f)) == FieldRole::metric) winner_metrics_.insert(roles_.canonical(record.key(f)));
    }
  }
  for (auto& c : companions_) {
    if (!c.pending) continue;
    emit_companion(c, *c.pending, step);
    c.pending.reset();
  }
  emit_(shape_of(winner_), from, step, record, line);
  last_step_ = step;
  for (auto& c : companions_) c.due = true;
}

void ShapeChooser::accept_companion(Companion& c, Held held) {
  if (c.before) {
    if (c.pending) ++c.dropped;  // two in a row: the older one goes with no winner line
    c.pending = std::move(held);
    return;
  }
  if (c.due && last_step_) {
    emit_companion(c, held, last_step_);
    c.due = false;
  } else {
    ++c.dropped;
  }
}

// The companion's record at the winner line's step, without the metrics the winner logs itself.
void ShapeChooser::emit_companion(Companion& c, const Held& held, std::optional<int64_t> step) {
  if (!step) {
    ++c.dropped;
    return;
  }
  FlatRecord own;
  own.arena = held.record.arena;
  for (const auto& f : held.record.fields) {
    if (!winner_metrics_.count(roles_.canonical(held.record.key(f)))) own.fields.push_back(f);
  }
  emit_(shape_of(c.slot), StepFrom::follows, step, own, held.line);
  ++c.records;
}

void ShapeChooser::finish() {
  if (winner_ == NONE) {
    decide(leader(true), 0);
  } else if (weak(winner_)) {
    // A strong shape that came late and had too few steps to take over on the way still beats a weak winner.
    size_t best = NONE;
    for (const auto& h : held_) {
      if (!weak(h.slot) && (best == NONE || better(h.slot, best))) best = h.slot;
    }
    if (best != NONE && !outweighs(winner_, best)) decide(best, 0);
  }
  drop_pending();  // printed after the last winner line, with none to go with
  held_.clear();
  held_bytes_ = 0;
  finished_ = true;
}

std::string ShapeChooser::describe(size_t slot, bool winner) const {
  const Stats& s = stats_[slot];
  Shape shape = shape_of(slot);
  std::string out = std::string(shape_name(shape)) + " (" + plural(s.records, "line", "lines");
  if (winner) out += ", " + plural(s.keys.size(), "metric", "metrics");
  // The most common step source, eval dicts aside.
  size_t top = static_cast<size_t>(StepFrom::none);
  for (size_t f = 0; f < STEP_FROM_COUNT; ++f) {
    if (f != static_cast<size_t>(StepFrom::follows) && s.from[f] > s.from[top]) top = f;
  }
  StepFrom from = static_cast<StepFrom>(top);
  std::string phrase(step_from_phrase(from));
  if (shape == Shape::verl && from == StepFrom::field) phrase = "step from `step:N`";
  if (shape == Shape::openrlhf) phrase = "step from `Global step N`";
  if (from == StepFrom::none && winner) phrase = "no step: numbered 1, 2, ...";
  out += ", " + phrase;
  if (!winner && !repeats(slot)) {
    out += s.records < options_.min_stepless_records ? ", printed once" : ", names not repeated";
  }
  return out + ")";
}

std::string ShapeChooser::detail(uint64_t config_lines, uint64_t summaries) const {
  size_t shown = winner_ != NONE ? winner_ : finished_ ? NONE : leader(true);
  std::string out = shown == NONE ? "console (no metric lines)" : "console: " + describe(shown, true);
  if (shown != NONE && switched_at_ > 0) out += " from line " + std::to_string(switched_at_);
  bool winning = shown != NONE && shown == winner_;
  size_t families = 0;
  uint64_t lines = 0, dropped = 0;
  for (const auto& c : companions_) {
    if (!winning || c.records == 0) continue;
    ++families;
    lines += c.records;
    dropped += c.dropped;
  }
  for (const auto& c : companions_) {
    if (families != 1 || c.records == 0) continue;
    out += " with " + std::string(shape_name(shape_of(c.slot))) + " (" + plural(c.records, "line", "lines") +
           ", at the step of the line printed " + (c.before ? "after" : "before") + " each";
  }
  if (families > 1) {
    out += " with " + std::to_string(families) + " stepless prints (" + plural(lines, "line", "lines") +
           ", each at the step of the line printed next to it";
  }
  if (families > 0) {
    if (dropped > 0) out += "; " + plural(dropped, "line", "lines") + " out of turn dropped";
    out += ")";
  }
  // A dict companion is its whole shape; free-text companions are some of their shape's lines.
  auto accompanies = [&](size_t slot) {
    return winning && std::any_of(companions_.begin(), companions_.end(),
                                  [&](const Companion& c) { return c.slot == slot && c.signature == 0 && c.records > 0; });
  };
  std::string ignored;
  for (size_t slot = 0; slot < SLOTS; ++slot) {
    if (slot == shown || accompanies(slot) || stats_[slot].records == 0) continue;
    ignored += (ignored.empty() ? "" : ", ") + describe(slot, false);
  }
  if (!ignored.empty()) out += "; ignored: " + ignored;
  if (config_lines > 0) {
    out += "; not metrics: " + plural(config_lines, "config or environment line", "config or environment lines");
  }
  if (summaries > 0) out += "; closing summary in the run's meta";
  return out;
}

}  // namespace rldk::io::console
