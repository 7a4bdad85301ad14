// The steps of HF/TRL dicts (see HfSteps in console_shapes.h).
#include <algorithm>
#include <cmath>

#include "io/console_shapes.h"
#include "io/run_settings.h"

namespace rldk::io::console {
namespace {

// The widest error of a printed epoch: transformers before 4.38 rounds it to two decimals.
constexpr double PRINTED_EPOCH_ERROR = 0.005;
// Steps per epoch are learned only from an epoch printed this precisely (relative error), so that a rounded small
// epoch (0.01 for anything from step 50 to 149 of 9930) does not teach a wrong number.
constexpr double LEARN_EPOCH_MAX_ERROR = 0.02;
// logging_steps are round numbers: an interval estimate within this relative distance of 1, 2, 2.5 or 5 x 10^k is
// that number (an estimate from rounded epochs is a few percent off).
constexpr double ROUND_INTERVAL_TOLERANCE = 0.1;
// Within int64 and exact in a double.
constexpr double MAX_STEP = 9e15;
// counter / log calls is a ratio of integers; this absorbs its floating-point error before the floor.
constexpr double RATIO_EPSILON = 1e-9;

double round_interval(double estimate) {
  if (!(estimate >= 1.5)) return 1;
  double best = std::round(estimate);
  double best_distance = ROUND_INTERVAL_TOLERANCE;
  for (double decade = 1; decade <= estimate * 10; decade *= 10) {
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      double c = m * decade;
      double distance = std::fabs(c - estimate) / c;
      if (c == std::floor(c) && distance <= best_distance) {
        best = c;
        best_distance = distance;
      }
    }
  }
  return best;
}

}  // namespace

void HfSteps::training(const FlatRecord& record, uint64_t line, std::optional<double> epoch) {
  std::optional<Counter> counter = counters_.at_training_dict();
  if (counters_.take_inner_loop_found()) burst_counter_.reset();  // the held dicts' counter counted within a step
  // A counter that moved since the burst began ends it (after_piece usually has already).
  if (!held_.empty() && (!counter || !burst_counter_ || counter->total != burst_counter_->total ||
                         counter->n != burst_counter_->n)) {
    flush();
  }
  if (held_.empty()) burst_counter_ = counter;
  ++calls_;
  hold(record, line, false, epoch);
  // Without a training counter there is nothing to wait for.
  if (!counter || held_.size() >= MAX_HELD) flush();
}

namespace {

// The number after `key` in `s` ("1,404" with thousands separators); nullopt without one.
std::optional<double> number_after(std::string_view s, std::string_view key) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  double value = 0;
  bool digits = false;
  for (size_t i = at + key.size(); i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + (s[i] - '0');
      digits = true;
    } else if (s[i] != ',' || !digits) {
      break;
    }
  }
  return digits ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

void HfSteps::banner(std::string_view s) {
  if (s.find(" = ") == std::string_view::npos) return;  // most lines: no banner field at all
  if (auto epochs = number_after(s, "Num Epochs = ")) banner_epochs_ = *epochs;
  auto total = number_after(s, "Total optimization steps = ");
  if (!total) total = number_after(s, "Total steps = ");
  if (!total || !(*total > 0)) return;
  new_training();
  if (banner_epochs_ && *banner_epochs_ >= 1) banner_steps_per_epoch_ = *total / *banner_epochs_;
  banner_epochs_.reset();
}

// The closing summary: the training is over. A script that trains again without a banner (self-play generations
// on HF Jobs) shows the next training's counter starting over: the first dict after the summary may take a counter
// behind the last step, a restart, instead of going on from the last step and losing the counter. Dicts with no
// counter go on numbering from the last step: nothing says where the next training's steps begin.
void HfSteps::training_over() {
  flush();
  counter_may_restart_ = true;
  calls_at_summary_ = calls_;
}

// A banner opens a new training: what was learned about the last one's steps no longer holds.
void HfSteps::new_training() {
  flush();
  forget_training();
}

void HfSteps::forget_training() {
  last_step_.reset();
  steps_per_epoch_.reset();
  steps_per_epoch_error_ = 1;
  interval_bound_.reset();
  first_epoch_step_.reset();
  epochs_from_zero_ = false;
  calls_ = 0;
  banner_steps_per_epoch_.reset();
}

void HfSteps::settings(std::string_view s) {
  if (s.find("logging_") == std::string_view::npos) return;  // most lines
  std::string_view steps = printed_value(s, "logging_steps");
  if (!steps.empty()) {
    // A whole number of steps; a fraction (newer transformers: a share of the total steps) says nothing here.
    int64_t n = 0;
    bool whole = steps.size() <= 9;
    for (char c : steps) {
      whole = whole && c >= '0' && c <= '9';
      if (whole) n = n * 10 + (c - '0');
    }
    if (whole && n >= 1) printed_interval_ = n;
  }
  std::string_view first = printed_value(s, "logging_first_step");
  if (!first.empty()) logging_first_step_ = first == "True" || first == "true";
}

void HfSteps::eval(const FlatRecord& record, uint64_t line) {
  if (held_.empty()) {
    offer_(Match::record_of(Shape::hf_dict, StepFrom::follows, last_step_.value_or(0)), record, line);
    return;
  }
  hold(record, line, true, std::nullopt);
  if (held_.size() >= MAX_HELD) flush();
}

void HfSteps::after_piece() {
  if (held_.empty() || !burst_counter_) return;
  int64_t now = counters_.count_of(burst_counter_->total);
  if (now == burst_counter_->n) return;
  // A bar that starts over from an incomplete count right after a dict counted within the dict's step.
  if (now < burst_counter_->n && burst_counter_->n < burst_counter_->total) {
    counters_.mark_inner(burst_counter_->total);
    counters_.take_inner_loop_found();
    burst_counter_.reset();
  }
  flush();
}

void HfSteps::hold(const FlatRecord& record, uint64_t line, bool eval, std::optional<double> epoch) {
  Held& h = held_.emplace_back();
  h.record.fields = record.fields;
  h.record.arena = record.arena;
  h.line = line;
  h.eval = eval;
  h.epoch = epoch;
  h.call = calls_;
}

void HfSteps::flush() {
  if (held_.empty()) return;
  if (counter_may_restart_) {
    // The first dicts after a closing summary: a counter behind the last step is the next training's own.
    counter_may_restart_ = false;
    if (burst_counter_ && last_step_ && burst_counter_->n <= *last_step_) {
      uint64_t before = calls_at_summary_;
      forget_training();
      for (auto& h : held_) h.call -= std::min(h.call, before);
      calls_ = held_.empty() ? 0 : held_.back().call;
    }
  }
  size_t burst = 0;
  uint64_t last_call = 0;
  for (const auto& h : held_) {
    if (!h.eval) {
      ++burst;
      last_call = h.call;
    }
  }
  int64_t next = last_step_ ? *last_step_ + 1 : 1;
  // The counter is never behind the dicts printed before it: counter / log calls bounds the logging interval.
  if (burst > 0 && burst_counter_ && burst_counter_->n >= next && last_call > 0) {
    double bound = static_cast<double>(burst_counter_->n) / static_cast<double>(last_call);
    interval_bound_ = interval_bound_ ? std::min(*interval_bound_, bound) : bound;
  }
  for (const auto& h : held_) {
    if (h.eval) {
      offer_(Match::record_of(Shape::hf_dict, StepFrom::follows, last_step_.value_or(0)), h.record, h.line);
      continue;
    }
    auto [step, from] = step_of(h, burst, last_step_ ? *last_step_ + 1 : 1);
    last_step_ = step;
    offer_(Match::record_of(Shape::hf_dict, from, step), h.record, h.line);
  }
  held_.clear();
  burst_counter_.reset();
}

std::pair<int64_t, StepFrom> HfSteps::step_of(const Held& dict, size_t burst_size, int64_t next) {
  const std::optional<Counter>& c = burst_counter_;
  if (burst_size == 1 && c && c->n >= next && agrees_with_epoch(c->n, dict.epoch)) {
    // Learned from the most precisely printed epoch so far (the largest).
    double error = dict.epoch && *dict.epoch > 0 ? PRINTED_EPOCH_ERROR / *dict.epoch : 1.0;
    if (error <= LEARN_EPOCH_MAX_ERROR && (!steps_per_epoch_ || error < steps_per_epoch_error_)) {
      steps_per_epoch_ = static_cast<double>(c->n) / *dict.epoch;
      steps_per_epoch_error_ = error;
    }
    return {c->n, StepFrom::tqdm};
  }
  if (burst_size > 1 && c && c->n >= next && interval_bound_) {
    double interval = std::floor(*interval_bound_ + RATIO_EPSILON);
    double step = static_cast<double>(dict.call) * interval;
    if (interval >= 1 && step >= static_cast<double>(next) && step <= static_cast<double>(c->n)) {
      return {static_cast<int64_t>(step), StepFrom::interval};
    }
  }
  if (dict.epoch && *dict.epoch > 0 && (c || banner_steps_per_epoch_)) {
    // The counter was not redrawn before this dict (or there is none): the epoch says where it is.
    return {std::max(next, step_from_epoch(*dict.epoch, c ? c->total : 0, dict.call, last_step_)),
            StepFrom::epoch};
  }
  if (!c && printed_interval_) {
    // Logged every printed_interval_ steps from the first (HF logs when global_step % logging_steps == 0).
    auto calls = static_cast<int64_t>(dict.call);
    int64_t step = logging_first_step_ ? (calls <= 1 ? 1 : (calls - 1) * *printed_interval_)
                                       : calls * *printed_interval_;
    if (step >= next) return {step, StepFrom::interval};
  }
  return {next, StepFrom::log_call};
}

// Without learned steps per epoch nothing contradicts a counter (the training total may be any number of epochs).
bool HfSteps::agrees_with_epoch(int64_t n, std::optional<double> epoch) {
  if (!epoch || !(*epoch > 0) || !steps_per_epoch_) return true;
  // The printed epoch's rounding, the learned steps per epoch's own error, and one step.
  double predicted = *epoch * *steps_per_epoch_;
  double tolerance = PRINTED_EPOCH_ERROR * *steps_per_epoch_ + steps_per_epoch_error_ * predicted + 1;
  return std::fabs(static_cast<double>(n) - predicted) <= tolerance;
}

// Epoch x steps per epoch (learned from a counter, else the banner's, else the training total as one epoch), snapped
// to a multiple of the logging interval when that is within the epoch's rounding. The interval is estimated from the
// epochs: as epoch steps per log call when the first such dict says the run began at step 0 (the estimate sharpens
// as calls add up), else from the steps between the first such dict and this one (a resumed run).
int64_t HfSteps::step_from_epoch(double epoch, int64_t total, uint64_t call, std::optional<int64_t> last) {
  double per_epoch = steps_per_epoch_          ? *steps_per_epoch_
                     : banner_steps_per_epoch_ ? *banner_steps_per_epoch_
                                               : static_cast<double>(total);
  double at = epoch * per_epoch;
  if (!std::isfinite(at) || at < 0 || at > MAX_STEP) return 0;
  double tolerance = PRINTED_EPOCH_ERROR * per_epoch + 1;
  auto calls = static_cast<double>(call);
  if (!first_epoch_step_) {
    first_epoch_step_ = {call, at};
    epochs_from_zero_ = std::fabs(round_interval(at / calls) * calls - at) <= tolerance;
  }
  double interval = 1;
  if (epochs_from_zero_) {
    interval = round_interval(at / calls);
  } else if (call > first_epoch_step_->first) {
    interval = round_interval((at - first_epoch_step_->second) / static_cast<double>(call - first_epoch_step_->first));
  }
  // One interval after the last dict, when the epoch allows it: an epoch printed to two decimals places a dict only
  // to within a step or so, and rounding each alone skips a step here and repeats one there (123 dicts logged every
  // step read as steps 1..124). A larger move is a real gap (dicts cut from a notebook's output).
  if (last && std::fabs(static_cast<double>(*last) + interval - at) <= tolerance) {
    return *last + static_cast<int64_t>(interval);
  }
  double snapped = interval * std::round(at / interval);
  return static_cast<int64_t>(std::fabs(snapped - at) <= tolerance ? snapped : std::round(at));
}

}  // namespace rldk::io::console
