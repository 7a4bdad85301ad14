// `eval/*` metrics of run logs as eval results: each run one seed of the arm, each metric one task, scored at the
// last, the best or a chosen evaluation step.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "rldk/evals.h"
#include "rldk/reader.h"

namespace rldk::evals {
namespace {

bool is_eval_metric(const std::string& name) {
  return name.starts_with("eval/") || name.starts_with("eval_") || name.starts_with("evaluation/");
}

bool lower_is_better(const std::string& name, const RunEvalOptions& options) {
  if (!options.lower_is_better.empty()) {
    return std::find(options.lower_is_better.begin(), options.lower_is_better.end(), name) !=
           options.lower_is_better.end();
  }
  return name.find("loss") != std::string::npos || name.find("perplexity") != std::string::npos;
}

}  // namespace

Status read_run_evals(const std::string& path, const RunEvalOptions& options, EvalData& data,
                      Diagnostics& diagnostics) {
  ReadOptions read;
  read.point_details = false;
  auto runs = read_runs(path, read);
  if (!runs.ok()) return runs.error();
  std::string arm = options.arm.empty() ? std::filesystem::path(path).stem().string() : options.arm;
  uint32_t arm_index = data.arm_index(arm);
  size_t found = 0;
  for (const auto& run : runs.value()) {
    for (const auto& [name, series] : run.series) {
      if (!is_eval_metric(name)) continue;
      std::optional<size_t> pick;
      for (size_t i = 0; i < series.size(); ++i) {
        if (!std::isfinite(series.values[i])) continue;
        if (options.at == EvalAt::step && series.steps[i] > options.step) continue;
        if (!pick) {
          pick = i;
        } else if (options.at == EvalAt::best) {
          bool lower = lower_is_better(name, options);
          if (lower ? series.values[i] < series.values[*pick] : series.values[i] > series.values[*pick]) pick = i;
        } else if (series.steps[i] >= series.steps[*pick]) {
          pick = i;
        }
      }
      if (!pick) {
        diagnostics.add(Diagnostic{"eval_metric", run.source.path, 0,
                                   name + ": no finite evaluation" +
                                       (options.at == EvalAt::step ? " at or before the chosen step" : "")});
        continue;
      }
      if (lower_is_better(name, options) &&
          std::find(data.lower_is_better.begin(), data.lower_is_better.end(), name) == data.lower_is_better.end()) {
        data.lower_is_better.push_back(name);
      }
      EvalCell cell;
      cell.arm = arm_index;
      cell.task = data.task_index(name);
      cell.seed = run.run_id;
      cell.score = series.values[*pick];
      data.cells.push_back(std::move(cell));
      ++found;
    }
  }
  if (found == 0) {
    return Error{ErrorCode::unrecognized, "no eval/* metric in this run log", path};
  }
  data.sources.push_back(path);
  return Ok{};
}

}  // namespace rldk::evals
