// Training settings found in what a log holds besides its metrics (data/metrics.yaml `settings`): a config dump or
// a command line in console text, a W&B config value, an MLflow param. Readers record them in the run's meta as
// setting.<name> (PointEmitter::meta does it for meta values, the console reader for its text lines), where
// detectors read them as context.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "rldk/metric_dictionary.h"

namespace rldk::io {

// (setting, the number as printed)
using SettingFound = std::function<void(const SettingInfo&, std::string_view)>;

// Each setting the text prints as a key and a number: 'entropy_coeff': 0.05 (a Python dict), entropy_coeff=0.05
// (hydra overrides, key=value), entropy_coeff: 0.05 (YAML, OmegaConf), "entropy_coeff": 0.05 (JSON),
// --entropy_loss_coef 0.01 (a command line). The key must stand alone (actor.entropy_coeff is the setting,
// entropy_coeff_max and my_entropy_coeff are not), and the value must be a finite number.
// With `variables`, a setting given by a name the code assigned a number to counts as that number
// (max_completion_length = hp_max_comp_len, after hp_max_comp_len = 200).
using CodeVariables = std::map<std::string, double, std::less<>>;
void find_settings_in_text(std::string_view text, const MetricDictionary& dictionary, const SettingFound& found,
                           const CodeVariables* variables = nullptr);

// A line of code that assigns a number to a plain name (hp_max_comp_len = 200, lr = 5e-6  # comment): the name and
// its value go into `variables` (at most MAX_CODE_VARIABLES of them: a notebook's hyperparameter cell, not every
// assignment a hostile file can hold).
void record_code_assignment(std::string_view line, CodeVariables& variables);
inline constexpr size_t MAX_CODE_VARIABLES = 4096;

// The value printed after `key` in `text` as above (key=V, key: V, 'key': V, --key V), a number or a word such as
// True; empty when the text does not print `key` as a whole name with a value. For settings a reader interprets
// itself rather than records (the HF Trainer's logging_steps).
std::string_view printed_value(std::string_view text, std::string_view key);

// A meta value: the key names a setting and the value is a number, or the value is a JSON object (a W&B config
// value) whose nested keys do.
void find_settings_in_meta(std::string_view key, std::string_view value, const MetricDictionary& dictionary,
                           const SettingFound& found);

}  // namespace rldk::io
