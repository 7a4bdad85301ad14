// The rldk.evals/v1 document (docs/schemas/rldk.evals.v1.schema.json). Absent numbers are null.
#include <cmath>

#include "rldk/evals.h"

namespace rldk::evals {
namespace {

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json interval_json(const Interval& i) {
  Json j = Json::Object{};
  j["estimate"] = number(i.estimate);
  j["low"] = number(i.low);
  j["high"] = number(i.high);
  j["note"] = i.note;
  return j;
}

Json numbers(const std::vector<double>& v) {
  Json j = Json::Array{};
  for (double x : v) j.push_back(number(x));
  return j;
}

Json strings(const std::vector<std::string>& v) {
  Json j = Json::Array{};
  for (const auto& s : v) j.push_back(s);
  return j;
}

const char* direction_name(Direction d) { return d == Direction::lower ? "lower" : "higher"; }

Json task_json(const TaskComparison& t) {
  Json j = Json::Object{};
  j["task"] = t.task;
  j["direction"] = direction_name(t.direction);
  j["design"] = t.design;
  j["seeds_a"] = static_cast<uint64_t>(t.seeds_a);
  j["seeds_b"] = static_cast<uint64_t>(t.seeds_b);
  j["items"] = static_cast<uint64_t>(t.items);
  j["mean_a"] = number(t.mean_a);
  j["mean_b"] = number(t.mean_b);
  j["improvement"] = number(t.improvement);
  j["ci_low"] = number(t.ci_low);
  j["ci_high"] = number(t.ci_high);
  j["interval"] = t.interval;
  j["p_value"] = number(t.p_value);
  j["p_holm"] = number(t.p_holm);
  j["gate_p"] = number(t.gate_p);
  j["gate_p_holm"] = number(t.gate_p_holm);
  j["welch"] = nullptr;
  if (t.welch) {
    Json w = Json::Object{};
    w["n_a"] = static_cast<uint64_t>(t.welch->n_a);
    w["n_b"] = static_cast<uint64_t>(t.welch->n_b);
    w["difference"] = number(t.welch->difference);
    w["t"] = number(t.welch->t);
    w["df"] = number(t.welch->df);
    w["p_value"] = number(t.welch->p_value);
    w["ci_low"] = number(t.welch->ci_low);
    w["ci_high"] = number(t.welch->ci_high);
    j["welch"] = w;
  }
  j["hedges_g"] = nullptr;
  if (t.hedges_g) {
    Json g = Json::Object{};
    g["value"] = number(t.hedges_g->value);
    g["ci_low"] = number(t.hedges_g->ci_low);
    g["ci_high"] = number(t.hedges_g->ci_high);
    j["hedges_g"] = g;
  }
  j["mann_whitney"] = nullptr;
  if (t.mann_whitney) {
    Json m = Json::Object{};
    m["u"] = number(t.mann_whitney->u);
    m["p_value"] = number(t.mann_whitney->p_value);
    m["exact"] = t.mann_whitney->exact;
    j["mann_whitney"] = m;
  }
  j["paired"] = nullptr;
  if (t.paired) {
    Json p = Json::Object{};
    p["n"] = static_cast<uint64_t>(t.paired->n);
    p["mean_difference"] = number(t.paired->mean_difference);
    p["sd_difference"] = number(t.paired->sd_difference);
    p["t"] = number(t.paired->t);
    p["df"] = number(t.paired->df);
    p["p_value"] = number(t.paired->p_value);
    p["ci_low"] = number(t.paired->ci_low);
    p["ci_high"] = number(t.paired->ci_high);
    p["effect_dz"] = number(t.paired->effect_dz);
    j["paired"] = p;
  }
  Json power = Json::Object{};
  power["effect"] = number(t.effect_for_power);
  power["power"] = number(t.power);
  power["needed"] = t.needed > 0 ? Json(static_cast<uint64_t>(t.needed)) : Json(nullptr);
  power["unit"] = t.design == "paired" ? "items" : "seeds per arm";
  j["power"] = power;
  j["verdict"] = t.verdict;
  j["warnings"] = strings(t.warnings);
  return j;
}

}  // namespace

Json evals_json(const EvalsReport& r) {
  Json j = Json::Object{};
  j["schema"] = EVALS_SCHEMA;
  j["a"] = r.a.empty() ? Json(nullptr) : Json(r.a);
  j["b"] = r.b.empty() ? Json(nullptr) : Json(r.b);
  j["arms"] = strings(r.arms);
  j["sources"] = strings(r.sources);
  j["verdict"] = r.verdict;
  j["summary"] = r.summary;
  j["warnings"] = strings(r.warnings);
  const EvalsOptions& o = r.options;
  Json opts = Json::Object{};
  opts["confidence"] = o.bootstrap.confidence;
  opts["interval_method"] = o.bootstrap.method == IntervalMethod::bca ? "bca" : "percentile";
  opts["reps"] = static_cast<uint64_t>(o.bootstrap.reps);
  opts["profile_reps"] = static_cast<uint64_t>(o.profile_reps);
  opts["seed"] = o.bootstrap.seed;
  opts["task_bootstrap"] = o.bootstrap.task_bootstrap;
  opts["margin"] = o.margin;
  opts["effect"] = number(o.effect);
  opts["power"] = o.power;
  opts["gamma"] = o.gamma;
  opts["lower_is_better"] = strings(o.lower_is_better);
  opts["min_bootstrap_seeds"] = static_cast<uint64_t>(o.min_bootstrap_seeds);
  j["options"] = opts;
  Json aggregates = Json::Array{};
  for (const auto& s : r.summaries) {
    Json a = Json::Object{};
    a["direction"] = direction_name(s.direction);
    a["tasks"] = strings(s.tasks);
    a["notes"] = strings(s.notes);
    Json arms = Json::Array{};
    for (const auto& arm : s.arms) {
      Json x = Json::Object{};
      x["arm"] = arm.arm;
      x["tasks"] = static_cast<uint64_t>(arm.tasks);
      x["runs_min"] = static_cast<uint64_t>(arm.runs_min);
      x["runs_max"] = static_cast<uint64_t>(arm.runs_max);
      x["mean"] = interval_json(arm.mean);
      x["median"] = interval_json(arm.median);
      x["iqm"] = interval_json(arm.iqm);
      x["optimality_gap"] = interval_json(arm.optimality_gap);
      Json p = Json::Object{};
      p["tau"] = numbers(arm.profile.tau);
      p["fraction"] = numbers(arm.profile.fraction);
      p["low"] = numbers(arm.profile.low);
      p["high"] = numbers(arm.profile.high);
      x["profile"] = p;
      arms.push_back(x);
    }
    a["arms"] = arms;
    a["probability_of_improvement"] =
        r.a.empty() ? Json(nullptr) : interval_json(s.probability_of_improvement);
    aggregates.push_back(a);
  }
  j["aggregates"] = aggregates;
  Json tasks = Json::Array{};
  for (const auto& t : r.tasks) tasks.push_back(task_json(t));
  j["tasks"] = tasks;
  Json gate = Json::Object{};
  gate["margin"] = o.margin;
  gate["confidence"] = o.bootstrap.confidence;
  gate["failed"] = r.gate_failed;
  gate["reasons"] = strings(r.gate_reasons);
  j["gate"] = gate;
  return j;
}

}  // namespace rldk::evals
