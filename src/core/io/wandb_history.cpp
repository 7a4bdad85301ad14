#include "io/wandb_history.h"

#include <cmath>

#include "io/records.h"

namespace rldk::io {

int64_t WandbRowSteps::step(std::span<const WandbItem> items, std::optional<int64_t> fallback, double& wall_time) {
  std::optional<int64_t> w_step, trainer;
  wall_time = NAN;
  for (const WandbItem& it : items) {
    FieldRole role = dictionary_.role_of(it.key);
    int64_t s = 0;
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
  if (trainer) {
    trainer_step_ = true;
    last_trainer_step_ = *trainer;
  }
  return trainer_step_ ? last_trainer_step_ : w_step ? *w_step : fallback.value_or(0);
}

bool WandbRowSteps::is_metric(std::string_view key) const {
  if (key.empty() || key.front() == '_') return false;  // W&B's own fields (_runtime, _wandb, ...)
  return dictionary_.role_of(key) == FieldRole::metric;
}

}  // namespace rldk::io
