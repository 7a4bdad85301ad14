#include "io/wandb_history.h"

#include <algorithm>
#include <cmath>

#include "io/records.h"

namespace rldk::io {

int64_t WandbRowSteps::step(std::span<const WandbItem> items, std::optional<int64_t> fallback, double& wall_time) {
  std::optional<int64_t> w_step, trainer;
  bool training_row = false;  // the row holds a metric that is not an evaluation's
  wall_time = NAN;
  for (const WandbItem& it : items) {
    FieldRole role = dictionary_.role_of(it.key);
    int64_t s = 0;
    // An evaluation's rows repeat the training step they were logged at, once per evaluation set.
    if (role == FieldRole::metric && is_metric(it.key) && !MetricDictionary::is_evaluation_name(it.key)) {
      training_row = true;
    }
    if (role == FieldRole::time && it.key == "_timestamp") {
      wall_time = it.value;
    } else if (role == FieldRole::step && step_from_number(it.value, s)) {
      if (it.key == "_step") w_step = s;
      else if (!trainer || trainer_step_key_ == it.key) {
        trainer = s;
        if (!trainer_step_) trainer_step_key_ = std::string(it.key);
      }
    }
  }
  if (trainer && !stuck_ && training_row) {
    // A training row that logs a metric again at the trainer's step: the step is coarser than the rows.
    if (trainer_step_ && *trainer != last_trainer_step_) metrics_at_step_.clear();
    for (const WandbItem& it : items) {
      if (!is_metric(it.key)) continue;
      if (std::find(metrics_at_step_.begin(), metrics_at_step_.end(), it.key) != metrics_at_step_.end()) {
        // Only forward: a `_step` behind the trainer's (HF's rows at global_step 10, 20 are rows 0, 1) would take
        // the steps back.
        // Before the step first moved, the rule above (stayed at its first value) judges.
        if (trainer_moved_ && w_step && *w_step > (last_training_step_ ? *last_training_step_ : last_trainer_step_)) {
          stuck_ = repeated_ = true;
        }
      } else if (metrics_at_step_.size() < MAX_METRICS_AT_STEP) {
        metrics_at_step_.emplace_back(it.key);
      }
    }
  }
  if (trainer && !stuck_) {
    if (!trainer_step_) {
      first_trainer_step_ = *trainer;
    } else if (!trainer_moved_ && *trainer != first_trainer_step_) {
      trainer_moved_ = true;
    } else if (!trainer_moved_ && training_row && w_step && last_w_step_ && *w_step > *last_w_step_ &&
               ++stalled_rows_ >= STUCK_ROWS) {
      stuck_ = true;
    }
    trainer_step_ = true;
    last_trainer_step_ = *trainer;
  }
  if (w_step) last_w_step_ = w_step;
  // A trainer's step behind the step its training rows were already given (`_step`, while it was 0) counts something
  // else than the rows (a custom trainer's outer iterations, each logging several rows): `_step` is the step axis.
  if (!stuck_ && trainer_moved_ && training_row && w_step && last_training_step_ &&
      last_trainer_step_ < *last_training_step_) {
    stuck_ = repeated_ = true;
  }
  int64_t step = 0;
  if (stuck_) {
    step = w_step ? *w_step : fallback.value_or(last_trainer_step_);
  } else if (trainer_step_ && !trainer_moved_ && first_trainer_step_ == 0 && (training_row || last_training_step_) &&
             w_step) {
    // Before the trainer's step first moves from 0, no optimizer step has been taken: `_step` dates those training
    // rows as well, and a trainer step stuck at 0 loses none of them. Evaluations before training stay at 0; those
    // between training rows so dated take `_step` with them.
    step = *w_step;
  } else {
    step = trainer_step_ ? last_trainer_step_ : w_step ? *w_step : fallback.value_or(0);
  }
  if (training_row) last_training_step_ = step;
  return step;
}

bool WandbRowSteps::is_metric(std::string_view key) const {
  if (key.empty() || key.front() == '_') return false;  // W&B's own fields (_runtime, _wandb, ...)
  return dictionary_.role_of(key) == FieldRole::metric;
}

}  // namespace rldk::io
