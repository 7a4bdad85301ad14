// Per-sample data: what the policy generated and how it was scored, beside the scalar curves of a Run.
//
// One row per completion: step, prompt, completion, one value per reward column (one per reward function), and
// what the trainer knew besides (advantage, group, gold/judge score). Readers stream rows into a SampleSink, so an
// analysis keeps only what it needs (numbers and a few quoted texts), never a whole 1 GB rollout dump.
//
// Sources, sniffed by content: TRL's completions/completions_NNNNN.parquet (written with log_completions=True),
// verl's rollout dumps ({step}.jsonl with input, output, score), and generic JSONL / CSV / Parquet score files.
// A folder is read file by file in step order. Columns are found by name (see SampleColumns) unless mapped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/diagnostics.h"
#include "rldk/result.h"

namespace rldk {

// Column names to use instead of the ones found by name. Empty: found automatically.
struct SampleColumns {
  std::string step, prompt, completion, group, advantage, gold;
  std::vector<std::string> rewards;  // reward columns; empty: every numeric column that plays no other role
  // Preference pairs (see PairRow): the two completions, the reward model's score of each, and the label.
  std::string first, second, first_score, second_score, label;
};

struct SampleReadOptions {
  SampleColumns columns;
  // Score files that rate prompts alone (prompt, score) have no completion column; comparing two reward models
  // on them is still meaningful. Rows then carry an empty completion.
  bool completion_required = true;
};

struct SampleRow {
  int64_t step = 0;             // the file's step (a verl dump's name, TRL's step column) when the row has none
  std::string_view prompt;      // text; a chat prompt is its messages' contents joined by newlines
  std::string_view completion;
  std::string_view group;       // the GRPO group: a group column, else the prompt (same step, same prompt)
  const double* rewards = nullptr;  // one per SampleSchema::rewards; NaN when the row has no value
  double advantage = 0;         // NaN when absent
  double gold = 0;              // NaN when absent
  std::string_view source;      // file
  uint64_t row = 0;             // 0-based row in that file, for quoting evidence
};

struct SampleSchema {
  std::vector<std::string> rewards;  // reward column names, in the order of SampleRow::rewards
  bool has_advantage = false, has_gold = false, has_group = false, has_step = false;
  std::string format;                // "parquet (TRL completions)", "jsonl (verl rollout dump)", ...
};

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  // Called once before the first row of each file; every file of one read has the same reward columns.
  virtual void on_schema(const SampleSchema& schema) = 0;
  virtual void on_row(const SampleRow& row) = 0;
};

// A preference pair: two completions of one prompt, which one was preferred (by a person, a judge, or by
// construction in chosen/rejected data), and the reward model's score of each. Files with chosen/rejected (or
// response_a/response_b and a label) columns are read as pairs; see docs/reward.md for the names recognised.
struct PairRow {
  std::string_view prompt, first, second;  // first = chosen or response A, second = rejected or response B
  double first_score = 0, second_score = 0;  // NaN when absent
  double label = 1;                          // 1: first preferred, 0: second, 0.5: a tie
  std::string_view source;
  uint64_t row = 0;
};

class PairSink {
 public:
  virtual ~PairSink() = default;
  virtual void on_pair_format(const std::string& format) = 0;  // once per file, before its pairs
  virtual void on_pair(const PairRow& pair) = 0;
};

// Reads a sample file or folder into `sink`. Bad rows and cells are reported in `diagnostics` (file:row) and
// skipped; an error means nothing could be read (missing path, no sample columns, unreadable Parquet).
// With `pairs`, files laid out as preference pairs go there instead (a folder may hold both kinds).
Status read_samples(const std::string& path, const SampleReadOptions& options, SampleSink& sink,
                    Diagnostics& diagnostics, PairSink* pairs = nullptr);

}  // namespace rldk
