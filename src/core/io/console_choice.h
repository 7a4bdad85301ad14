// Which console line shape's records become the run's steps.
//
// A real console log holds several shapes that look like metrics: a custom loop's summary line per step beside
// per-sample debug prints, OpenRLHF's status dict beside the same values in the tqdm postfix, verl's step lines
// beside key=value settings. Emitting them all puts per-sample values at made-up steps and mixes series. So records
// are counted per shape (a shape and, for free-text shapes, whether the line has a step of its own) and one shape
// wins: the one that carries its step, then the one with the most distinct metrics, then the most lines.
//
// Streaming with bounded memory: records are held in a look-ahead buffer until the decision, then the winner's
// buffered records are emitted in order and the others dropped (they are counted for `rldk info`). A stepped shape
// is decided once it has been seen at `decide_after_steps` distinct steps, long enough for a competing shape printed
// once per step to have shown up. Weak shapes (no step of their own, or a tqdm postfix, a display of values that a
// trainer usually logs in full elsewhere) wait for `decide_weak_after_records` records. Either way the buffer's
// bounds (records, bytes) force a decision, and the end of the data decides with what was seen. After a weak
// winner, a strong shape that turns up later still takes over (its records are buffered until it has shown its
// steps), so a long preamble of prints cannot lock the run to them; so does a stepped shape with more metrics than
// a stepped winner (a second training stage printed another way); earlier emitted points stay.
//
// A stepped shape loses to a stepless one that outweighs it, which makes it a side print beside the training log:
//   - a trainer's stepless logging dict with at least twice its metrics, printed at least half as often since
//     the dict's first line (a reward function's `[STEP n] | percent_score_0=78.57% | ...` debug line, DeepSpeed's
//     "step=100, skipped=0" beside Open-Reasoner-Zero's dict of the step's ten metrics), or a tqdm postfix redrawn
//     four times or more per dict with no more than twice its metrics (a bar of micro-batches within each step);
//     a dict printed once between every two stepped lines goes with them as their companion instead (below);
//   - a stepless shape that counts its steps: between two of its lines (steps a and b, b - a >= 2), exactly b - a
//     of the stepless shape's lines, at least twice and never otherwise (a loop printing "grpo_loss is ... and kl is
//     ..." at every step and "[step 25] avg_loss=... acc=..." every 25). Per-sample prints are several per step.
// The stepless shape's lines are then numbered by position, and the stepped ones are left out.
//
// A stepped winner, or a trainer's stepless dict (numbered 1, 2, ...), may have companions: a stepless dict, or
// free-text lines of one set of three or more names (up to 8 such families, sharing no metric name), each printed
// once per winner line, always just before it or always just after it
// (a custom PPO loop prints its stats dict, with tensor(...) values, and then "Step: N | Loss: ... | KL: ...";
// Open-Reasoner-Zero prints "avg_raw_rewards: X, avg_kl: X, ..." before each update's dict, among hundreds of other
// `key: value` prints). Its records take the step of the winner line they go with (before: the next
// one; after: the previous one) instead of being dropped. The companion is chosen with the winner, from the
// look-ahead, only when its records and the winner's strictly alternate, and the side is the one its records sit
// nearer to (in lines): the order alone cannot tell, since one dict printed before the loop (an initial evaluation)
// makes "after" read as "before". With no nearer side the dicts are left out, as before. A record that breaks the
// alternation later is dropped (and counted), and metrics the winner itself logs (by metric name: `kl` and `KL`
// are one) stay the winner's.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "io/console_shapes.h"

namespace rldk::io::console {

struct ShapeChoiceOptions {
  // A stepped shape wins once it has been seen at this many distinct steps and leads.
  uint32_t decide_after_steps = 3;
  // A weak shape (stepless, or a tqdm postfix) wins only after this many records and no strong shape. Following a
  // live trainer, 64 keeps the first points prompt. Reading a file, the look-ahead bounds decide: a launcher's
  // settings printed once per rank (96 "world_rank=0, local_rank=0, master_port=29500" lines) must not become the
  // steps of a run whose metric lines start 10,000 lines later.
  uint64_t decide_weak_after_records = 64;
  // Look-ahead bounds: reaching either decides with what has been seen.
  size_t max_buffered_records = 4096;
  size_t max_buffered_bytes = size_t{8} << 20;
  // A free-text shape without steps must repeat to be a series: a line printed once is a setting or a summary
  // ("Reward weights: accuracy=0.7, format=0.3"), and so are lines whose names do not repeat: a trainer prints the
  // same metrics at every log call (on one line or one per line), so its names are used min_uses_per_stepless_name
  // times each on average or more. A notebook's config and test prints ("Learning rate: 5e-06", "Max new tokens:
  // 400", "Reward: 0.20 (expected: ...)") are 42 uses of 22 names.
  uint64_t min_stepless_records = 2;
  uint64_t min_uses_per_stepless_name = 3;
  // Distinct metric names remembered per shape (for the ranking and `rldk info`); more are counted as this many.
  size_t max_tracked_keys = 4096;
};

class ShapeChooser {
 public:
  using Emit = std::function<void(Shape, StepFrom, std::optional<int64_t> step, const FlatRecord&, uint64_t line)>;

  ShapeChooser(RecordInterpreter& roles, Emit emit, ShapeChoiceOptions options = {});

  void offer(const Match& match, const FlatRecord& record, uint64_t line);
  // Choose only when the look-ahead is full or the data ends: for input that is whole before it is offered.
  void decide_at_end() {
    options_.decide_after_steps = UINT32_MAX;
    options_.decide_weak_after_records = UINT64_MAX;
  }
  void finish();
  // "console: key: value fields (412 lines, 9 metrics, step from `(n/N)`); ignored: key=value (2300 lines, no step)".
  std::string detail(uint64_t config_lines, uint64_t summaries) const;

 private:
  static constexpr size_t SLOTS = SHAPE_COUNT * 2;
  static constexpr size_t NONE = SIZE_MAX;

  struct Stats {
    uint64_t records = 0;
    uint64_t stepped = 0;  // records with a step of their own
    uint64_t follows = 0;  // eval dicts (neither)
    uint64_t steps_seen = 0;
    uint64_t backwards = 0;  // step changes to a lower step
    std::optional<int64_t> last_step;
    uint64_t first_line = 0;
    uint64_t numbered = 0;  // stepless records numbered so far
    std::array<uint64_t, STEP_FROM_COUNT> from{};
    std::unordered_set<std::string> keys;
    uint64_t name_uses = 0;  // metric names in all records, each use counted
  };
  struct Held {
    size_t slot;
    StepFrom from;
    std::optional<int64_t> step;
    uint64_t line;
    FlatRecord record;
  };

  static size_t slot_of(Shape shape, StepFrom from);
  static Shape shape_of(size_t slot) { return static_cast<Shape>(slot / 2); }
  bool carries_step(size_t slot) const;
  bool restarts_often(size_t slot) const;
  bool counted_steps(size_t slot) const;
  static constexpr uint64_t MIN_RESTARTS = 3, CHANGES_PER_RESTART = 10;  // restarts_often(), counted_steps()
  bool weak(size_t slot) const;
  bool repeats(size_t slot) const;
  bool better(size_t a, size_t b) const;
  bool outweighs(size_t stepless, size_t stepped) const;
  void pace(size_t slot, std::optional<int64_t> step);
  size_t leader(bool strict) const;
  std::optional<int64_t> step_of(const Match& match, const FlatRecord& record);
  void count(size_t slot, const Match& match, const FlatRecord& record, uint64_t line);
  void hold(size_t slot, const Match& match, std::optional<int64_t> step, const FlatRecord& record, uint64_t line);
  bool room() const;
  void decide(size_t slot, uint64_t line);
  bool may_accompany(size_t slot) const;
  static uint64_t signature(const FlatRecord& record);
  struct Companion {
    size_t slot;
    uint64_t signature;  // the names its lines print (0: any line of the slot)
    bool before;         // printed before the winner line it goes with (else after it)
    std::optional<Held> pending;  // before: the record waiting for the next winner line
    bool due = false;             // after: a winner line came since its last record
    uint64_t records = 0, dropped = 0;
  };
  Companion* companion_of(size_t slot, const FlatRecord& record);
  void choose_companions();
  void drop_pending();
  void deliver_winner(StepFrom from, std::optional<int64_t> step, const FlatRecord& record, uint64_t line);
  void accept_companion(Companion& c, Held held);
  void emit_companion(Companion& c, const Held& held, std::optional<int64_t> step);
  std::string describe(size_t slot, bool winner) const;

  RecordInterpreter& roles_;
  Emit emit_;
  ShapeChoiceOptions options_;
  std::array<Stats, SLOTS> stats_;
  // pace_[t][s]: how the lines of slot s fall between consecutive lines of the stepped slot t (outweighs()).
  struct Pace {
    uint64_t since = 0;  // lines of s since the last line of t
    uint32_t agree = 0;  // gaps of t's steps (>= 2) that s's lines matched exactly
    uint32_t disagree = 0;
    uint64_t after_first = 0;  // lines of s since the first line of t (for any t)
    uint32_t single = 0, not_single = 0;  // gaps between t's lines holding one line of s, or another number
  };
  std::array<std::array<Pace, SLOTS>, SLOTS> pace_{};
  std::deque<Held> held_;
  size_t held_bytes_ = 0;
  size_t winner_ = NONE;
  std::string scratch_;       // a key being looked up among a shape's keys
  uint64_t switched_at_ = 0;  // the line where a later strong shape took over from a weak winner
  bool finished_ = false;
  // The winner's companions (see the top of this file), at most MAX_COMPANIONS.
  static constexpr size_t MAX_COMPANIONS = 8;
  std::vector<Companion> companions_;
  std::optional<int64_t> last_step_;  // the step of the last winner line
  std::unordered_set<std::string> winner_metrics_;  // metric names the winner's lines logged (with a companion)
};

}  // namespace rldk::io::console
