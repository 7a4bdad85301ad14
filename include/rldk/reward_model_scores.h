// Scores for `rldk reward drift` from a real reward model: a local Hugging Face sequence-classification model folder
// (config.json beside the weights), run on a prompts/completions file.
//
// The model runs in Python (torch + transformers, python/rldk/reward_models.py), started as a child process with an
// argument vector, never through a shell. It writes a JSONL score file (prompt, completion, score) that the
// ordinary score-file comparison reads; all the statistics stay in C++.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rldk/result.h"

namespace rldk {

struct RewardModelScoreOptions {
  std::string python;               // interpreter; empty: find_scoring_python()
  std::string prompt_col, response_col;  // columns of the prompts file, and the names written to the score file
  size_t batch_size = 8;
  size_t max_length = 1024;         // tokens per input (capped by the model's own limit); longer ones lose their start
  std::string device;               // "cpu", "cuda", "cuda:1", ...; empty: cuda when available, else cpu
  std::string dtype = "float32";    // float32 | float64 | bfloat16 | float16
};

// A folder holding config.json: a model, not a folder of sample files.
bool is_reward_model_dir(const std::string& path);

// The interpreter that scores: $RLDK_PYTHON when set, else python3 beside the running executable (a virtual
// environment's bin/ holds both), else python3 on PATH. Empty when none is found.
std::string find_scoring_python();

// Scores `samples` (JSONL or Parquet with prompt and, optionally, completion columns) with the model in `model_dir`
// and writes `out` (JSONL: prompt, completion, score, one line per scored row, in file order). Errors:
// invalid_argument with the scorer's one-line reason (no interpreter, torch/transformers missing, not a
// sequence-classification model, unreadable prompts file, ...).
Status score_with_reward_model(const std::string& model_dir, const std::string& samples, const std::string& out,
                               const RewardModelScoreOptions& options);

}  // namespace rldk
