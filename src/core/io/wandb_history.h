// How a W&B history row becomes points, shared by the run file reader (wandb_format.cpp) and the API poller
// (wandb_server.cpp), so that a run read from its .wandb file and from the server gives the same points.
// Step: the trainer's step when the row carries one the metric dictionary knows as a step field other than `_step`
// (TRL/transformers log `train/global_step` with every call; once seen, rows without it keep the last one), else
// W&B's own `_step` (the history row index, or the step passed to wandb.log), else the caller's fallback. The
// trainer's step is preferred because it is the step that the trainer's other logs (TensorBoard, JSONL, the console)
// use, so runs read from different backends line up. A trainer's step that stays at its first value while `_step`
// advances over STUCK_ROWS training rows (rows of evaluation metrics repeat a step once per evaluation set) is no step axis (TRL 0.9's PPOv2Trainer logs train/global_step = 0 with every row):
// `_step` is the step from then on; rows before it keep their points at the trainer's value, except while that value
// is 0 (no optimizer step taken yet), where `_step` dates them too (and the evaluation rows between them). A trainer's step that moves to a value behind the
// `_step` its training rows were given while it was 0, or at which a training row logs a metric a second time, counts
// something else (a custom trainer's outer iterations of several rows each): `_step` is the step from then on too. A trainer step that repeats for a row or two is
// normal (an evaluation logged at the step of the training row before it). Wall time: `_timestamp` (Unix seconds). Metrics: numeric items
// whose name the dictionary does not give another role, except W&B's own fields (`_runtime`, `_wandb`, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/metric_dictionary.h"

namespace rldk::io {

struct WandbItem {
  std::string_view key;
  double value;  // W&B's NaN and Infinity included; items that are not numbers are not WandbItems
};

class WandbRowSteps {
 public:
  explicit WandbRowSteps(const MetricDictionary& dictionary) : dictionary_(dictionary) {}
  // The row's step (see above) and its wall time (NaN without `_timestamp`).
  int64_t step(std::span<const WandbItem> items, std::optional<int64_t> fallback, double& wall_time);
  bool is_metric(std::string_view key) const;
  // Where the steps come from, for a reader's description.
  std::string source() const {
    if (stuck_ && !repeated_) {
      return "_step (" + trainer_step_key_ + " stayed at " + std::to_string(first_trainer_step_) + ")";
    }
    if (stuck_) return "_step (" + trainer_step_key_ + " repeats over rows)";
    return trainer_step_ ? trainer_step_key_ : "_step";
  }

 private:
  static constexpr int STUCK_ROWS = 3;
  const MetricDictionary& dictionary_;
  bool trainer_step_ = false;
  std::string trainer_step_key_;
  int64_t last_trainer_step_ = 0;
  int64_t first_trainer_step_ = 0;
  bool trainer_moved_ = false;
  int stalled_rows_ = 0;  // rows whose trainer step was still its first value while `_step` advanced
  bool stuck_ = false;
  bool repeated_ = false;  // stuck because the trainer's step repeats over training rows
  std::optional<int64_t> last_w_step_;
  std::optional<int64_t> last_training_step_;  // the step the last training row was given
  static constexpr size_t MAX_METRICS_AT_STEP = 512;
  std::vector<std::string> metrics_at_step_;  // metrics the training rows at the trainer's current step logged
};

}  // namespace rldk::io
