// rldk replay: the seed of a recorded run, and the replay report.
#include <cmath>
#include <cstdio>

#include "report/markdown_text.h"
#include "rldk/replay.h"

namespace rldk {
namespace {

std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

}  // namespace

Result<SeedLookup> find_run_seed(const Run& run) {
  if (auto it = run.meta.find("seed"); it != run.meta.end()) {
    try {
      size_t used = 0;
      int64_t seed = std::stoll(it->second, &used);
      if (used == it->second.size()) return SeedLookup{seed, "metadata"};
    } catch (const std::exception&) {
    }
    return Error{ErrorCode::invalid_argument, "the run's seed '" + it->second + "' is not an integer; pass --seed",
                 run.source.path};
  }
  if (const Series* s = run.find("seed")) {
    for (double v : s->values) {
      if (!std::isfinite(v)) continue;
      if (v != std::floor(v) || std::fabs(v) > 9.0e15) {
        return Error{ErrorCode::invalid_argument, "the run's logged seed " + num(v) + " is not an integer; pass --seed",
                     run.source.path};
      }
      return SeedLookup{static_cast<int64_t>(v), "logged value"};
    }
  }
  return Error{ErrorCode::invalid_argument,
               "the run records no seed (no 'seed' in its metadata or metrics); pass --seed N", run.source.path};
}

Result<std::string> substitute_seed(const std::string& command, int64_t seed) {
  static const std::string PLACEHOLDER = "{seed}";
  std::string out;
  size_t start = 0, found = 0, count = 0;
  while ((found = command.find(PLACEHOLDER, start)) != std::string::npos) {
    out += command.substr(start, found - start) + std::to_string(seed);
    start = found + PLACEHOLDER.size();
    ++count;
  }
  out += command.substr(start);
  if (count == 0) {
    return Error{ErrorCode::invalid_argument,
                 "the command has no {seed} placeholder, so the replay would not use the run's seed (e.g. "
                 "--command \"python train.py --seed {seed}\")",
                 command};
  }
  return out;
}

std::string ReplayReport::verdict() const {
  if (!errors.empty() || !comparison.errors.empty()) return "error";
  return comparison.passed() ? "pass" : "fail";
}

Json replay_json(const ReplayReport& r) {
  Json out;
  out["schema"] = REPLAY_SCHEMA;
  out["original"] = r.original_path;
  out["command"] = r.command;
  out["seed"] = r.seed.seed;
  out["seed_source"] = r.seed.source;
  out["verdict"] = r.verdict();
  Json replay;
  replay["ok"] = r.outcome.succeeded();
  replay["outcome"] = r.outcome.describe();
  replay["work_dir"] = r.outcome.work_dir;
  replay["stdout"] = r.outcome.stdout_path;
  replay["stderr"] = r.outcome.stderr_path;
  out["replay"] = replay;
  Json settings;
  settings["mode"] = r.compare.bitwise ? "bitwise" : "tolerance";
  settings["rtol"] = r.compare.rtol;
  settings["atol"] = r.compare.atol;
  out["settings"] = settings;
  out["steps_only_original"] = r.steps_only_original;
  out["steps_only_replay"] = r.steps_only_replay;
  Json errors = Json::Array{};
  for (const auto& e : r.errors) errors.push_back(e);
  for (const auto& e : r.comparison.errors) errors.push_back(e);
  out["errors"] = errors;
  Json metrics = Json::Array{};
  for (const auto& m : r.comparison.metrics) {
    Json j;
    j["name"] = m.name;
    j["passed"] = m.passed();
    j["steps_compared"] = m.steps_compared;
    j["mismatched_steps"] = m.divergent_steps;
    j["first_mismatch_step"] = m.first_divergent_step ? Json(*m.first_divergent_step) : Json(nullptr);
    j["max_abs_diff"] = m.max_abs_deviation;
    j["max_rel_diff"] = m.max_rel_deviation;
    j["max_diff_step"] = m.max_abs_deviation > 0 ? Json(m.max_deviation_step) : Json(nullptr);
    metrics.push_back(j);
  }
  out["metrics"] = metrics;
  return out;
}

std::string replay_text(const ReplayReport& r) {
  std::string v = r.verdict();
  std::string out = (v == "pass" ? "REPRODUCED" : v == "fail" ? "NOT REPRODUCED" : "ERROR") + std::string("\n");
  out += "original: " + r.original_path + "\nseed:     " + std::to_string(r.seed.seed) + " (" + r.seed.source +
         ")\ncommand:  " + r.command + "\nreplay:   " + r.outcome.describe() + "\ncompare:  " +
         (r.compare.bitwise ? std::string("bitwise") : "rtol " + num(r.compare.rtol) + ", atol " + num(r.compare.atol)) +
         "\n";
  for (const auto& e : r.errors) out += "error: " + e + "\n";
  for (const auto& e : r.comparison.errors) out += "error: " + e + "\n";
  for (const auto& m : r.comparison.metrics) {
    out += "  " + m.name + ": ";
    if (m.passed()) {
      out += "matches at " + std::to_string(m.steps_compared) + " steps";
    } else {
      out += std::to_string(m.divergent_steps) + " of " + std::to_string(m.steps_compared) +
             " steps outside the tolerance, first at step " + std::to_string(*m.first_divergent_step) +
             "; max |diff| " + num(m.max_abs_deviation) + " at step " + std::to_string(m.max_deviation_step);
    }
    out += "\n";
  }
  if (r.steps_only_original || r.steps_only_replay) {
    out += "not compared: " + std::to_string(r.steps_only_original) + " steps only in the original, " +
           std::to_string(r.steps_only_replay) + " only in the replay\n";
  }
  return out;
}

std::string replay_markdown(const ReplayReport& r) {
  std::string v = r.verdict();
  std::string out = "# Replay\n\n**" + std::string(v == "pass" ? "Reproduced" : v == "fail" ? "Not reproduced" : "Error") +
                    "**\n\n- original: " + md_code(r.original_path) + "\n- seed: " + std::to_string(r.seed.seed) +
                    " (" + md_text(r.seed.source) + ")\n- command: " + md_code(r.command) +
                    "\n- replay: " + md_text(r.outcome.describe()) + "\n\n";
  for (const auto& e : r.errors) out += "- error: " + md_text(e) + "\n";
  for (const auto& e : r.comparison.errors) out += "- error: " + md_text(e) + "\n";
  out += "| metric | steps | mismatched | first mismatch | max \\|diff\\| |\n|---|---|---|---|---|\n";
  for (const auto& m : r.comparison.metrics) {
    out += "| " + md_code(m.name) + " | " + std::to_string(m.steps_compared) + " | " + std::to_string(m.divergent_steps) +
           " | " + (m.first_divergent_step ? std::to_string(*m.first_divergent_step) : "none") + " | " +
           num(m.max_abs_deviation) + " |\n";
  }
  return out;
}

}  // namespace rldk
