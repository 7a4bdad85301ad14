// The bound kind: a metric outside its healthy range (data/metrics.yaml `healthy`), judged from the first logged
// point. Real logs are short (30-500 points) and often go wrong at once, before any learned baseline exists; a
// per-token KL of 3 nats or an entropy at 2% of where it began is a failure whatever the run's history says.
//
// The detector watches one side of the resolved metric's healthy range (option `bound`): an absolute level
// (`above`, `below`) or a multiple of the run's starting level (`above_start`, `below_start`; for a metric that
// starts negative, such as a log-probability, a factor above 1 makes the bound more negative). The starting level
// is the least extreme of the first start_points values in the watched direction (their maximum for a fall, their
// minimum for a rise): when the change begins inside those first points, the level before it still counts.
// An episode opens after min_points points beyond the warning level (more for a noisy metric, see enough_points)
// with at most open_max_gap quiet points between consecutive ones (0: an unbroken stretch; a bound that is a state,
// such as a gradient norm of zero, allows a few: a norm that is zero at most steps between some large ones is as
// much "no gradient" as an unbroken stretch of zeros). It lasts while points stay beyond it (max_gap quiet points
// allowed) and is critical when min_points of them pass the critical level. With critical_min_points set (fewer
// than min_points), that many consecutive points beyond the critical level open a critical episode sooner: two
// logged steps with nearly every completion cut at the cap are no noise, and on a run logged every 10 steps five
// points are 50 optimizer steps of training on cut answers before the monitor says so. Such an episode is dated
// again once it holds min_points points, as the episode opened the usual way would have been. Its onset is
// where the excursion began (onset_of_excursion), not the crossing; with `onset: crossing` it is the first
// crossing itself, for bounds that are a state rather than a change (a gradient norm of exactly zero: the decline
// before it is not yet "no gradient"). With `onset: start` only an excursion that began at the run's first
// start_points points counts, dated there: a level that says something only of where the run started (at its first
// step a rollout engine and the trainer hold the same weights, so a sampler/trainer KL far above numerics there is
// the two computing different policies; later, asynchronous sampling raises it on purpose).
//
// With a `per` input, the bound judges the watched metric divided by it (a completion length over the length cap,
// which may be a run setting: setting.max_completion_length). A mean beyond that limit says the limit is not this
// metric's. The catalog's `contradicted_when:` conditions say the same of the metric itself where they hold (a
// clipped fraction of 1 beside completions of different lengths under the cap: the trainer counted as cut
// completions that ended on a stop token it does not recognise). Either way the detector judges nothing from then on
// and reports nothing for the run: what it would say is not true of it.
//
// A `progress` context input (the reward) tells a run that converges from one that collapses: an entropy that
// falls while the reward climbs to its ceiling is a policy sharpening on what it learned (published GSM8K
// baselines fall to 6 % of their starting entropy that way), the same fall with a flat or falling reward is the
// collapse. With progress_min_sigma > 0, a finding whose progress metric rose over the run (the median of its
// last quarter, 5-20 points, above the median of its first by progress_min_sigma standard errors and by a tenth of
// the larger level; see Progress::moved), judged when the data ends, is reported one severity lower, saying why. The
// same context tells a run that learned through steps without a learning signal (a sparse reward's slow start) from
// one that never did. A run that logs no reward (DPO, ORPO) may show its progress in a `progress_down` input (the
// loss) falling by the same test; it is read only when the run has no `progress` metric.
//
// A `moved` context input (the per-token KL to the reference model) tells a policy that changed from batches that
// differ: while the policy is still (nearly) its reference, under UNMOVED_KL nats per token over an episode (median
// of its points), an entropy twice where it started is not the policy sampling more randomly, it is a first batch unlike
// the rest (a real TRL run's first step of 17-token answers at entropy 0.3, then 0.9 for 300 steps at a KL of
// 0.001). Such an episode is a note that says so, live too: its alarm is held while the KL so far stays under the
// level, and raised once it passes it while the episode lasts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "detect/kind_support.h"
#include "rldk/metric_dictionary.h"
#include "stats/change_point.h"
#include "stats/distributions.h"
#include "stats/robust.h"

namespace rldk::detect {
namespace {

// A take-off is a climb at least this many times steeper per point than the drift before it.
constexpr double TAKE_OFF_RATIO = 4.0;

class Bound final : public Detector {
 public:
  explicit Bound(const DetectorSpec& s) : Detector(s), contradictions_(s.contradictions, s) {
    side_name_ = s.option("bound", "above");
    up_ = side_name_ == "above" || side_name_ == "above_start";
    relative_ = side_name_ == "above_start" || side_name_ == "below_start";
    log_ = s.option("transform", "none") == "log";
    date_change_ = s.option("onset", "change") == "change";
    start_only_ = s.option("onset", "change") == "start";
    min_points_ = std::max<int64_t>(1, static_cast<int64_t>(s.param("min_points", 2)));
    // 0: no quicker confirmation; points beyond the critical level count as any others.
    critical_min_points_ = std::clamp<int64_t>(static_cast<int64_t>(s.param("critical_min_points", 0)), 0, min_points_);
    max_gap_ = std::max<int64_t>(0, static_cast<int64_t>(s.param("max_gap", 1)));
    open_max_gap_ = std::max<int64_t>(0, static_cast<int64_t>(s.param("open_max_gap", 0)));
    chance_rate_ = std::clamp(s.param("chance_rate", 0.0), 0.0, 0.5);
    start_points_ = std::max<int64_t>(1, static_cast<int64_t>(s.param("start_points", 3)));
    onset_fraction_ = std::clamp(s.param("onset_fraction", 0.5), 0.0, 1.0);
    history_.configure(static_cast<int>(std::max(4.0, s.param("history", 64))));
    progress_min_sigma_ = s.param("progress_min_sigma", 0.0);
    progress_required_ = s.option("progress", "eases") == "required";
    resolved_min_ratio_ = s.param("resolved_min_ratio", 0.0);
    for (size_t i = 1; i < s.inputs.size(); ++i) {
      if (s.inputs[i].first == "progress") progress_.input = i;
      if (s.inputs[i].first == "progress_down") progress_down_.input = i;
      if (s.inputs[i].first == "per") per_ = i;
      if (s.inputs[i].first == "moved") moved_ = i;
    }
    moved_history_.configure(static_cast<int>(std::max(4.0, s.param("history", 64))));
    episode_moved_.configure(static_cast<int>(std::max(4.0, s.param("history", 64))));
    progress_down_.sign = -1;
  }
  void reset() override {
    finish();
    segment_findings_ = findings_.size();
    seen_ = 0;
    start_ = NaN;
    firsts_.clear();
    pending_ = pending_quiet_ = pending_critical_ = redate_at_points_ = 0;
    alarm_held_ = held_unraised_ = opened_by_critical_ = false;
    episode_onset_ = 1;
    episode_end_ = 0;
    history_.reset();
    moved_history_.reset();
    episode_moved_.reset();
    progress_.reset();
    progress_down_.reset();
  }
  void observe(int64_t step, const double* x) override {
    if (progress_min_sigma_ > 0) {
      for (Progress* p : {&progress_, &progress_down_}) {
        if (p->input) p->track(p->input < input_steps.size() ? input_steps[p->input] : step, x[p->input]);
      }
    }
    double v = x[0];
    if (per_ > 0) {
      v = x[per_] > 0 ? v / x[per_] : NaN;  // a share of a limit; none without a positive limit
      // A mean beyond the limit (a setting printed for another phase).
      if (v > LIMIT_TOLERANCE) contradicted_ = true;
    }
    if (contradictions_.all_hold(x)) contradicted_ = true;
    if (contradicted_) {
      findings_.clear();
      return;
    }
    if (!std::isfinite(v)) return;
    last_step_ = step;
    double moved = moved_ > 0 ? x[moved_] : NaN;
    if (std::isfinite(moved)) moved_history_.push(moved, step);
    if (!resolved_ && !resolve()) return;
    if (seen_ < start_points_) {
      firsts_.push_back(v);
      start_ = starting_level();
    }
    ++seen_;
    history_.push(transformed(log_, v), step);
    double warning = level_of(side_->warning), critical = level_of(side_->critical);
    if (std::isnan(warning)) return;  // a relative bound before its start level is known, or a start of 0
    bool beyond = up_ ? v > warning : v < warning;
    bool beyond_critical = !std::isnan(critical) && (up_ ? v > critical : v < critical);
    // A held-back confirmation is raised as soon as the progress that eased it is gone while the episode lasts.
    if (episode_.open && beyond && std::isfinite(moved)) episode_moved_.push(moved, step);
    if (alarm_held_ && episode_.open && beyond && !hold_warnings_ && !eases_to_note_so_far() && !unmoved_so_far()) {
      alarm_held_ = false;
      alarm(step);
    }
    if (!beyond) {
      if (episode_.open) {
        if (++episode_.quiet_points > max_gap_) close();
      } else if (pending_ > 0 && ++pending_quiet_ > open_max_gap_) {
        pending_ = 0;
      } else if (pending_ > 0) {
        ++pending_span_;
      }
      pending_critical_ = 0;
      return;
    }
    if (episode_.open) {
      add(step, v, beyond_critical);
      if (redate_at_points_ > 0 && episode_.points >= redate_at_points_) {
        redate_at_points_ = 0;
        episode_.onset = onset_date(warning);
      }
      return;
    }
    // `onset: start`: a crossing after the run's first points opens nothing.
    if (start_only_ && pending_ == 0 && seen_ > start_points_) return;
    if (pending_ == 0) {
      first_crossing_step_ = step;
      first_crossing_seen_ = seen_;
      noise_share_ = noise_share(warning);
      pending_span_ = 0;
    }
    pending_quiet_ = 0;
    ++pending_span_;
    pending_critical_ = beyond_critical ? pending_critical_ + 1 : 0;
    bool by_critical = critical_min_points_ > 0 && pending_critical_ >= critical_min_points_;
    bool enough = enough_points(++pending_);
    if (!enough && !by_critical) return;
    // With `progress: required`, the bound is the fault only once the progress metric has moved by now; until then
    // each further point beyond it tries again (a live monitor and the scan decide alike, at the same point).
    if (progress_required_ && !progress_so_far()) {
      --pending_;
      if (beyond_critical) --pending_critical_;
      return;
    }
    bool began_beyond = up_ ? start_ > warning : start_ < warning;
    episode_began_beyond_ = began_beyond && !relative_ && first_crossing_seen_ <= start_points_;
    first_crossing_onset_ = onset_date(warning);
    // Opened by its critical level before min_points points: dated again when it holds that many.
    opened_by_critical_ = !enough;
    redate_at_points_ = opened_by_critical_ ? min_points_ : 0;
    // Confirmed: the episode starts where the change began and holds every point beyond the bound since the first
    // crossing.
    pending_ = pending_critical_ = 0;
    // Live (a rule naming this detector), a confirmation the scan would report as a note is held back: a warning
    // whose progress metric has risen so far is eased to a note (judge_progress), so `rldk monitor` would warn where
    // `rldk scan` does not (a healthy verl PPO run whose entropy sharpened to under 10% of its start while the reward
    // climbed). It is raised after all if the episode goes on to its critical level, which eases to a warning, or
    // if the progress is lost while the episode lasts or by the end of the data. A setting that eases this detector
    // (hold_warnings) holds it the same way, until the critical level.
    // The KL to the reference at the points of the excursion so far (moved_history_ holds the ones logged with it).
    episode_moved_.reset();
    for (int i = 0; i < moved_history_.size(); ++i) {
      int64_t at = moved_history_.step_from_oldest(i);
      if (at >= first_crossing_step_) episode_moved_.push(moved_history_.at_from_oldest(i), at);
    }
    alarm_held_ = unmoved_so_far() || (!opened_by_critical_ && (hold_warnings_ || eases_to_note_so_far()));
    if (!alarm_held_) alarm(step);
    episode_.begin(first_crossing_onset_);
    critical_points_ = 0;
    alarm_step_ = step;
    int first = history_.size() - 1;
    while (first > 0 && history_.step_from_oldest(first - 1) >= first_crossing_step_) --first;
    for (int i = first; i < history_.size(); ++i) {
      double raw = log_ ? std::exp(history_.at_from_oldest(i)) : history_.at_from_oldest(i);
      if (up_ ? raw > warning : raw < warning) add(history_.step_from_oldest(i), raw, up_ ? raw > critical : raw < critical);
    }
    episode_.onset = first_crossing_onset_;
  }
  void finish() override {
    close();
    // A confirmation held because the progress metric had risen, when the run ends without that progress (the
    // scan, judging the whole run, then keeps the warning): raised now, at the last point.
    if (held_unraised_ && !hold_warnings_ && !eases_to_note_so_far()) alarm(last_step_);
    held_unraised_ = false;
    judge_resolved();
    judge_progress();
    if (contradicted_) findings_.clear();
  }

 private:
  // Whether `beyond` points beyond the bound, among the pending_span_ points since the first crossing, make an
  // episode: min_points, or more for a metric whose own noise crosses the bound by chance. A per-step mean over a
  // few completions swings widely (a length of 210 tokens that is under 30 % of its start at one point in six; a
  // reward spread that is exactly 0 at a quarter of the steps when one prompt's 8 completions are often all right):
  // with p the share of recent points beyond the bound, outside any episode, so many of them among so few points
  // happen by chance with the binomial tail probability P(X >= beyond | span, p); the episode needs that below
  // chance_rate (p^k for an unbroken stretch of k), or MAX_POINTS_FOR_NOISE points. A metric that was inside its
  // range until now needs min_points. With chance_rate 0 every excursion of min_points counts: bounds that are a
  // limit in themselves (a per-token KL above 0.3 nats, most completions truncated), which the monitor's presets
  // stop on at once.
  bool enough_points(int64_t beyond) const {
    if (beyond < min_points_) return false;
    if (!(noise_share_ > 0) || beyond >= MAX_POINTS_FOR_NOISE) return true;
    if (noise_share_ >= 0.5) return false;
    auto k = static_cast<double>(beyond), n = static_cast<double>(std::max(pending_span_, beyond));
    return stats::incomplete_beta(k, n - k + 1, noise_share_) < chance_rate_;
  }
  // The share of recent points beyond the bound, outside any episode (0 without chance_rate, or with fewer than
  // MIN_NOISE_REFERENCE of them).
  double noise_share(double warning) const {
    if (!(chance_rate_ > 0)) return 0;
    int64_t before = 0, beyond = 0;
    for (int i = 0; i + 1 < history_.size(); ++i) {  // the point that just crossed is not part of the reference
      int64_t s = history_.step_from_oldest(i);
      if (s >= episode_onset_ && s <= episode_end_) continue;
      double raw = log_ ? std::exp(history_.at_from_oldest(i)) : history_.at_from_oldest(i);
      ++before;
      beyond += (up_ ? raw > warning : raw < warning) ? 1 : 0;
    }
    if (before < MIN_NOISE_REFERENCE) return 0;
    return static_cast<double>(beyond) / static_cast<double>(before);
  }

  // The least extreme of the first values in the watched direction, so that a change beginning inside them still
  // counts (a completion length of 53 tokens, then 3). For a rise judged against the start on a log scale, a first
  // value an order of magnitude (START_OUTLIER_FACTOR) below their median is left out: it is a single odd step, not
  // the run's level. A GRPO step whose groups all scored alike has a gradient norm of ~0.0003 among norms of 0.3-0.5,
  // and every later ordinary norm would read as "3,000x its start" (a real healthy TRL run). A fall keeps its first
  // value whatever it is: the collapse at the second point is the common real case there.
  double starting_level() const {
    double median = NaN;
    if (relative_ && up_ && log_ && firsts_.size() >= 2) {
      std::vector<double> sorted(firsts_);
      median = stats::median_in_place(sorted);
    }
    double level = NaN;
    for (double v : firsts_) {
      if (median > 0 && v > 0 && v * START_OUTLIER_FACTOR < median) continue;
      level = std::isnan(level) ? v : (up_ ? std::min(level, v) : std::max(level, v));
    }
    return level;
  }
  // The metric's range comes from the dictionary once the driver has named the metric this run resolved to.
  bool resolve() {
    resolved_ = true;
    if (!std::isnan(spec_.level_warning)) {
      own_levels_.warning = spec_.level_warning;
      own_levels_.critical = spec_.level_critical;
      side_ = &own_levels_;
      return true;
    }
    const MetricInfo* info = metric_names.empty() ? nullptr : MetricDictionary::builtin().find(metric_names.front());
    side_ = info ? info->healthy.side(side_name_) : nullptr;
    if (side_ == nullptr || !side_->set()) side_ = nullptr;
    return side_ != nullptr;
  }
  double level_of(double bound) const {
    if (std::isnan(bound) || !relative_) return bound;
    // A start of 0 has no multiple. A negative start (a sequence log-probability) works the same way: "below twice
    // the start" is more negative than twice the start's value.
    if (!(start_ != 0) || seen_ < std::min<int64_t>(start_points_, 2)) return NaN;
    return bound * start_;
  }
  // The step where the excursion that just crossed the bound began. First the unbroken stretch, ending at the
  // crossing, of points beyond onset_fraction of the way from the starting level to the bound: a metric drifting
  // gently inside its healthy range (KL growing from 0.001 to 0.05 as GRPO learns) is not yet the failure. A metric
  // may drift slowly inside that stretch before it takes off (KL creeping from 0.1 to 0.19 as it learns, then 2
  // nats at once): a hinge fitted within the stretch (stats::ramp_start, in working units) dates the take-off, and
  // is used when the climb after it is TAKE_OFF_RATIO times steeper per point than both the drift before it and the
  // point-to-point noise there. A run-up that climbs evenly along the stretch keeps the stretch's start.
  int64_t onset_of_excursion(double bound) {
    double level = start_ + onset_fraction_ * (bound - start_);
    int last = history_.size() - 1, first = last;
    while (first > 0) {
      double previous = log_ ? std::exp(history_.at_from_oldest(first - 1)) : history_.at_from_oldest(first - 1);
      if (!(up_ ? previous > level : previous < level)) break;
      --first;
    }
    int64_t inside = take_off_step(first, last);
    if (inside >= 0) return inside;
    // A stretch that climbs evenly may be the end of a slide that began while the metric was still near its
    // starting level (an entropy steady for 30 points that then falls smoothly for 40): a take-off over the whole
    // history held dates it.
    if (first > 0) {
      int64_t early = take_off_step(0, last);
      if (early >= 0 && early < history_.step_from_oldest(first)) return early;
    }
    return history_.step_from_oldest(first);
  }
  // The step where the points from..last of the history take off towards the bound: a hinge (stats::ramp_start)
  // whose climb after it is TAKE_OFF_RATIO times steeper per point than both the drift before it and the
  // point-to-point noise there. -1 when there is none.
  int64_t take_off_step(int from, int last) {
    scratch_.clear();
    for (int i = from; i <= last; ++i) scratch_.push_back(history_.at_from_oldest(i));
    size_t take_off = stats::ramp_start(scratch_);
    if (take_off < 2) return -1;
    double toward = up_ ? 1.0 : -1.0;
    double before = toward * (scratch_[take_off - 1] - scratch_[0]) / static_cast<double>(take_off - 1);
    double after = toward * (scratch_.back() - scratch_[take_off - 1]) / static_cast<double>(scratch_.size() - take_off);
    // The point-to-point noise before the take-off: a one-point "take-off" that noise could make is not one.
    diffs_.clear();
    for (size_t i = 1; i < take_off; ++i) diffs_.push_back(std::fabs(scratch_[i] - scratch_[i - 1]));
    double noise = stats::median_in_place(diffs_);
    if (!(after > TAKE_OFF_RATIO * std::max({before, noise, 0.0}))) return -1;
    return history_.step_from_oldest(from + static_cast<int>(take_off));
  }
  void add(int64_t step, double v, bool beyond_critical) {
    double w = transformed(log_, v);  // the peak is the most extreme point in the watched direction
    episode_.add(step, v, up_ ? w : -w);
    critical_points_ += beyond_critical ? 1 : 0;
    if (alarm_held_ && critical_points_ >= min_points_ && !unmoved_so_far()) {
      alarm_held_ = false;
      alarm(step);
    }
  }
  // Where the excursion that is being confirmed began. Dated with every point of the excursion so far: a take-off
  // judged at its first point alone would be one noisy value. A run whose starting level is already beyond the
  // bound began in this state: its first crossing.
  int64_t onset_date(double warning) {
    bool began_beyond = up_ ? start_ > warning : start_ < warning;
    int64_t onset = date_change_ && !began_beyond ? onset_of_excursion(warning) : first_crossing_step_;
    // A take-off inside the excursion (0.37 nats, then 17.8 at the next point) is no later than its first point
    // beyond the bound: the episode holds that point.
    return std::min(onset, first_crossing_step_);
  }
  // Whether an episode confirmed now would be reported as a note because the progress metric has risen by now: a
  // warning-level detector that progress eases, with progress judged on the data so far.
  bool eases_to_note_so_far() {
    if (!(progress_min_sigma_ > 0) || progress_required_ || spec_.severity != Severity::warning) return false;
    const Progress& progress = active_progress();
    double start = NaN, now = NaN;
    return progress.input && progress.moved(progress_min_sigma_, start, now, scratch_);
  }
  // Whether the policy has stayed (nearly) its reference over the open episode so far: the median of the `moved`
  // input's values at its last `history` points under UNMOVED_KL. False without that input or its values.
  bool unmoved_so_far() {
    if (moved_ == 0 || episode_moved_.size() == 0) return false;
    scratch_.clear();
    for (int i = 0; i < episode_moved_.size(); ++i) scratch_.push_back(episode_moved_.at_from_oldest(i));
    moved_level_ = stats::median_in_place(scratch_);
    return moved_level_ < UNMOVED_KL;
  }
  void close() {
    if (!episode_.open) return;
    episode_.open = false;
    bool unmoved = unmoved_so_far();
    // An episode of batches that differed, not of the policy, raises nothing at the end of the data either.
    held_unraised_ = held_unraised_ || (alarm_held_ && !unmoved);
    alarm_held_ = false;
    episode_onset_ = episode_.onset;
    episode_end_ = episode_.end;
    if (episode_.points < min_points_ && !opened_by_critical_) return;
    double warning = level_of(side_->warning), critical = level_of(side_->critical);
    std::map<std::string, double> evidence = {{"bound", warning},
                                              {"critical_bound", critical},
                                              {"level", episode_.mean()},
                                              {"points", static_cast<double>(episode_.points)},
                                              {"critical_points", static_cast<double>(critical_points_)},
                                              {"alarm_step", static_cast<double>(alarm_step_)},
                                              {"beyond_step", static_cast<double>(first_crossing_step_)}};
    if (relative_) {
      evidence["start"] = start_;
      evidence["ratio"] = start_ != 0 ? episode_.peak_value / start_ : NaN;
      evidence["bound_factor"] = side_->warning;
    }
    if (progress_required_) {
      evidence["progress_start"] = required_start_;
      evidence["progress_level"] = required_now_;
    }
    report(episode_.onset, episode_.end, episode_.peak_step, episode_.peak_value, std::move(evidence));
    if (critical_points_ >= min_points_ || opened_by_critical_) findings_.back().severity = Severity::critical;
    // The onset dates where the move began; a text that counts the points beyond the bound from the first of them
    // ({beyond_step}) says the move before it separately (a KL that rose from 0.26 at step 188 and first passed 0.3
    // at step 250 was not "above 0.3 from step 188").
    if (episode_.onset < first_crossing_step_ && spec_.explanation.find("{beyond_step}") != std::string::npos) {
      char note[120];
      std::snprintf(note, sizeof note, " Its move there began at step %lld.", static_cast<long long>(episode_.onset));
      findings_.back().explanation += note;
    }
    // A run whose first logged points were already beyond an absolute bound (a per-token KL of 1.1 nats at step 1)
    // started there: training had no time to move it, so the cause is in how the run was set up.
    if (episode_began_beyond_) {
      findings_.back().evidence["from_start"] = 1;
      findings_.back().explanation +=
          " It was there from the run's first logged points, before training could have moved it far: look first at "
          "how the run was set up.";
    }
    if (unmoved) {
      findings_.back().evidence["moved_level"] = moved_level_;
      char note[400];
      std::snprintf(note, sizeof note,
                    " Meanwhile %s stayed at %.3g (median) against the model the run started from, under %.3g: the "
                    "policy had barely moved, so this is the batches differing from the first ones (other prompts, "
                    "shorter or longer answers), not the policy changing; a note rather than a finding.",
                    metric_names.size() > moved_ ? metric_names[moved_].c_str() : "the KL", moved_level_, UNMOVED_KL);
      ease(findings_.back(), Severity::info, note);
    }
    if (progress_required_) {
      char note[160];
      std::snprintf(note, sizeof note, " Meanwhile %s %s from %.3g to %.3g.", required_name_.c_str(),
                    required_sign_ > 0 ? "rose" : "fell", required_start_, required_now_);
      findings_.back().explanation += note;
    }
  }
  // A finding that the run's own course explains is reported one severity lower (critical -> warning -> info).
  static Severity one_lower(Severity s) { return s == Severity::critical ? Severity::warning : Severity::info; }
  // At the end of the data: with resolved_min_ratio > 0, when the metric stayed inside its bound after its last
  // episode for resolved_min_ratio times as many steps as its episodes spanned (first onset to last end), the run
  // got over it on its own (a long-reasoning GRPO run cut at its cap for its first 50 of 300 steps while the policy
  // learned to finish inside it): each finding is one severity lower and says where it resolved.
  void judge_resolved() {
    if (!(resolved_min_ratio_ > 0) || findings_.size() <= segment_findings_) return;
    // This segment's findings: a restart judged its own.
    auto segment = std::span<Finding>(findings_).subspan(segment_findings_);
    int64_t first = segment.front().onset_step, last = segment.front().end_step;
    for (const Finding& f : segment) {
      first = std::min(first, f.onset_step);
      last = std::max(last, f.end_step);
    }
    int64_t after = last_step_ - last;
    double span = static_cast<double>(std::max<int64_t>(1, last - first));
    if (!(static_cast<double>(after) >= resolved_min_ratio_ * span)) return;
    for (Finding& f : segment) {
      if (f.severity == Severity::info) continue;
      f.evidence["resolved_step"] = static_cast<double>(last);
      char note[256];
      std::snprintf(note, sizeof note,
                    " It resolved after step %lld and %s stayed within its healthy range for the remaining %lld "
                    "steps: the run got over it on its own.",
                    static_cast<long long>(last), metric_names.empty() ? "the metric" : metric_names[0].c_str(),
                    static_cast<long long>(after));
      ease(f, one_lower(f.severity), note);
    }
  }
  // At the end of the data: when the progress metric rose over the whole run, the run learned through this
  // detector's episodes, each of which becomes one severity lower and says so.
  void judge_progress() {
    double start = NaN, now = NaN;
    if (!(progress_min_sigma_ > 0) || progress_required_) return;  // required: judged as each episode opened
    const Progress& progress = active_progress();
    if (!progress.input || !progress.moved(progress_min_sigma_, start, now, scratch_)) return;
    const std::string& name = metric_names[progress.input];
    for (Finding& f : findings_) {
      if (f.severity == Severity::info || f.evidence.count("progress_level")) continue;
      f.evidence["progress_start"] = start;
      f.evidence["progress_level"] = now;
      Severity was = f.severity, to = one_lower(was);
      char note[320];
      std::snprintf(note, sizeof note,
                    " Over the run %s %s from %.3g to %.3g: the run learned all the same, so this is a %s rather "
                    "than a %s; if %s stops improving, look here first.",
                    name.c_str(), progress.sign > 0 ? "rose" : "fell", start, now,
                    to == Severity::info ? "note" : "warning",
                    was == Severity::critical ? "critical finding" : "warning", name.c_str());
      ease(f, to, note);
    }
  }

  // `progress: required`: whether the progress metric has moved so far (its start and level kept for the report). A
  // reward spread that vanished as the reward climbed to its top is saturation; one that vanished at a floor is
  // another fault, judged elsewhere.
  bool progress_so_far() {
    const Progress& progress = active_progress();
    if (!progress.input || !progress.moved(progress_min_sigma_, required_start_, required_now_, scratch_)) return false;
    required_name_ = metric_names[progress.input];
    required_sign_ = progress.sign;
    return true;
  }

  std::string side_name_;
  size_t per_ = 0;  // the input the watched metric is divided by (a `per` role: a length over its cap); 0: none
  Conditions contradictions_;
  size_t moved_ = 0;  // the `moved` context input (the KL to the reference); 0: none
  // A per-token KL to the reference this low is a policy that has barely moved: healthy runs' policies that learn
  // reach 0.01-0.1 (data/metrics.yaml), and an entropy that doubled is a change no smaller KL goes with.
  static constexpr double UNMOVED_KL = 0.01;
  double moved_level_ = NaN;
  RingWindow moved_history_;  // its recent values, by step
  RingWindow episode_moved_;  // its values at the open (or last) episode's points, the last `history` of them
  bool contradicted_ = false;  // by its limit or by contradicted_when: nothing is judged or reported
  static constexpr double LIMIT_TOLERANCE = 1.02;  // a mean at most this far over its limit (rounding, a token)
  bool up_ = true, relative_ = false, log_ = false, resolved_ = false, date_change_ = true, start_only_ = false;
  const HealthyRange::Side* side_ = nullptr;
  HealthyRange::Side own_levels_;  // the catalog's `levels:`, when it sets them
  int64_t min_points_, critical_min_points_, max_gap_, open_max_gap_, start_points_;
  int64_t seen_ = 0, pending_ = 0, pending_quiet_ = 0, critical_points_ = 0, alarm_step_ = 0;
  int64_t pending_critical_ = 0;  // consecutive points beyond the critical level, ending at the latest one
  bool opened_by_critical_ = false;  // the open (or last) episode was opened by critical_min_points
  int64_t redate_at_points_ = 0;     // >0: date the open episode again when it holds this many points
  // Chance episodes of the metric's own noise: at most chance_rate_ per point; the reference needs this many points.
  double chance_rate_ = 0;
  static constexpr int MIN_NOISE_REFERENCE = 10;
  static constexpr int64_t MAX_POINTS_FOR_NOISE = 12;
  double noise_share_ = 0;   // noise_share at the pending excursion's first crossing
  int64_t pending_span_ = 0;  // points since that crossing, beyond the bound or not
  // The last reported episode's steps: its points are not the metric's noise.
  int64_t episode_onset_ = 1, episode_end_ = 0;
  double start_ = NaN, onset_fraction_ = 0.5;
  std::vector<double> firsts_;  // the first start_points values
  static constexpr double START_OUTLIER_FACTOR = 10.0;
  std::vector<double> scratch_, diffs_;
  int64_t first_crossing_onset_ = 0, first_crossing_step_ = 0;
  // The open episode began at the run's first points, which were beyond the (absolute) bound.
  bool episode_began_beyond_ = false;
  int64_t first_crossing_seen_ = 0;
  // A progress context input: its first values (for its start level and early noise) and its last ones, as it stood
  // at each point of the watched metric (its latest value; the two are logged together in the usual case).
  struct Progress {
    static constexpr int64_t MIN_POINTS = 5;
    static constexpr double MEDIAN_EFFICIENCY = 1.2533;  // a median's standard error over a mean's, for normal noise
    static constexpr size_t EARLY_POINTS = 20;
    size_t input = 0;  // its index among the inputs; 0: none
    double sign = 1;   // +1: progress is a rise (a reward); -1: a fall (a loss)
    std::vector<double> early;
    RingWindow recent;
    int64_t seen = 0, last_step = 0;

    Progress() { recent.configure(static_cast<int>(EARLY_POINTS)); }
    void reset() {
      early.clear();
      recent.reset();
      seen = 0;
    }
    // `step`: where the value was logged; one carried forward to later points counts once.
    void track(int64_t step, double p) {
      if (!std::isfinite(p) || (seen > 0 && step == last_step)) return;
      last_step = step;
      if (early.size() < EARLY_POINTS) early.push_back(p);
      recent.push(p, step);
      ++seen;
    }
    // The start and current levels when the metric moved clearly the way progress goes over the run.
    //
    // The current level is the median of the last w points: a quarter of the run, from 5 to 20 points. The start
    // is the median of the first w points, or of the first 5 when that shows the move and the quarter does not: a
    // reward that climbed to its top inside the run's first quarter (0.11 -> 0.98 in 7 of 50 points) has a
    // first-quarter median near its top, and the run would read as one that never learned. The move must exceed
    // min_sigma standard errors of the difference of the two medians (1.2533 x sqrt(1/w_start + 1/w) x the early
    // point-to-point noise): a GRPO reward averaged over 4 completions per step jumps by 0.2-0.5 between steps, and
    // a real climb from 0.26 to 0.56 over 100 steps is progress even though it never clears four single-point noises.
    bool moved(double min_sigma, double& start, double& now, std::vector<double>& scratch) const {
      int64_t w = std::clamp<int64_t>(seen / 4, MIN_POINTS, static_cast<int64_t>(EARLY_POINTS));
      if (seen < 2 * w || static_cast<int64_t>(early.size()) < w || recent.size() < w) return false;
      scratch.clear();
      for (int i = recent.size() - static_cast<int>(w); i < recent.size(); ++i) scratch.push_back(recent.at_from_oldest(i));
      now = stats::median_in_place(scratch);
      scratch = early;
      double noise = stats::difference_noise(scratch);
      for (int64_t w_start : {w, MIN_POINTS}) {
        scratch.assign(early.begin(), early.begin() + w_start);
        double level = stats::median_in_place(scratch);
        double standard_error =
            MEDIAN_EFFICIENCY * std::sqrt(1.0 / static_cast<double>(w_start) + 1.0 / static_cast<double>(w)) * noise;
        double move = sign * (now - level);
        if (move > min_sigma * standard_error && move >= 0.1 * std::max(std::fabs(level), std::fabs(now))) {
          start = level;
          return true;
        }
      }
      return false;
    }
  };
  double progress_min_sigma_ = 0;
  bool progress_required_ = false;
  bool alarm_held_ = false;     // this episode's confirmation was held back as a note (eases_to_note_so_far)
  bool held_unraised_ = false;  // an episode closed with its confirmation still held (raised at finish if due)
  double required_start_ = NaN, required_now_ = NaN, required_sign_ = 1;
  std::string required_name_;
  double resolved_min_ratio_ = 0;
  int64_t last_step_ = 0;
  size_t segment_findings_ = 0;  // findings before this segment (a restart) are not judged again
  // The reward when the run logs one, else the loss (a `progress_down` input).
  const Progress& active_progress() const { return progress_.seen > 0 ? progress_ : progress_down_; }
  Progress progress_, progress_down_;
  RingWindow history_;
  Episode episode_;
};

}  // namespace

std::unique_ptr<Detector> make_bound(const DetectorSpec& spec) { return std::make_unique<Bound>(spec); }

}  // namespace rldk::detect
