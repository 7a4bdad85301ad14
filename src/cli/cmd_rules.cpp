// rldk rules list | explain ID | validate FILE: the built-in presets and rule files.
#include <cstdio>

#include "commands.h"
#include "report_output.h"
#include "rldk/json.h"
#include "rldk/rules.h"

namespace rldk::cli {
namespace {

std::string actions_text(const Rule& r) {
  std::string out;
  for (const auto& a : r.actions) out += (out.empty() ? "" : ", ") + a.kind;
  return out;
}

std::string metrics_text(const Rule& r) {
  if (r.metrics.empty()) return "where " + r.where_text;
  std::string out;
  for (const auto& m : r.metrics) out += (out.empty() ? "" : ", ") + m;
  return out;
}

Json rule_json(const Rule& r, const std::string& preset) {
  Json j;
  j["id"] = r.id;
  if (!preset.empty()) j["preset"] = preset;
  j["description"] = r.description;
  Json metrics = Json::Array{};
  for (const auto& m : r.metrics) metrics.push_back(m);
  j["metrics"] = metrics;
  if (!r.where_text.empty()) j["where"] = r.where_text;
  j["condition"] = r.condition_text;
  j["window"]["size"] = r.window_size;
  j["window"]["kind"] = r.window_kind == WindowKind::rolling ? "rolling" : "consecutive";
  j["grace_steps"] = r.grace_steps;
  j["cooldown_steps"] = r.cooldown_steps;
  Json actions = Json::Array{};
  for (const auto& a : r.actions) actions.push_back(a.kind);
  j["actions"] = actions;
  j["origin"] = r.origin;
  return j;
}

int list_rules(const std::string& only, bool json) {
  Json out;
  out["schema"] = "rldk.rules/v1";
  Json list = Json::Array{};
  for (const auto& name : preset_names()) {
    if (!only.empty() && name != only) continue;
    auto preset = load_preset(name);
    if (!preset.ok()) {
      std::fprintf(stderr, "rldk rules: %s\n", to_string(preset.error()).c_str());
      return EXIT_INPUT_ERROR;
    }
    if (!json) std::printf("%s\n", name.c_str());
    for (const auto& r : preset->rules) {
      if (json) {
        list.push_back(rule_json(r, name));
      } else {
        std::string decides = r.condition_text;
        if (decides.empty() && r.detector) {
          decides = r.detector->catalog_id.empty() ? r.detector->kind : "the scan's " + r.detector->catalog_id;
        }
        std::printf("  %-36s %-26s %-40s %s\n", r.id.c_str(), metrics_text(r).c_str(), decides.c_str(),
                    actions_text(r).c_str());
      }
    }
  }
  if (json) {
    out["rules"] = list;
    print_text(stdout, out.dump());
  } else {
    std::printf("\n`rldk rules explain ID` for one rule; `rldk monitor --preset NAME` to use a preset.\n");
  }
  return EXIT_OK;
}

int explain_rule(const std::string& id) {
  for (const auto& name : preset_names()) {
    auto preset = load_preset(name);
    if (!preset.ok()) continue;
    const Rule* r = preset->find(id);
    if (!r) continue;
    std::printf("%s  (preset %s)\n  %s\n\n", r->id.c_str(), name.c_str(), r->description.c_str());
    std::printf("  watches      %s\n", metrics_text(*r).c_str());
    if (r->detector && !r->detector->catalog_id.empty()) {
      // The scan's detector decides, with its own levels and point counts: a window or grace of the rule's would
      // only mislead here.
      std::printf("  detector     %s (the scan's %s detector, live: `rldk scan` reports the same finding)\n",
                  r->detector->catalog_id.c_str(), r->detector->kind.c_str());
    } else if (r->detector) {
      std::printf("  detector     %s, direction %s, warm-up %d values\n", r->detector->kind.c_str(),
                  r->detector->direction.c_str(), r->detector->warmup);
    }
    if (r->condition) {
      std::printf("  condition    %s\n", r->condition_text.c_str());
      std::printf("  window       %d values (%s)\n", r->window_size,
                  r->window_kind == WindowKind::rolling ? "rolling" : "consecutive");
    }
    if (r->grace_steps > 0 || r->condition) {
      std::printf("  grace        %lld steps\n", static_cast<long long>(r->grace_steps));
    }
    if (r->cooldown_steps > 0 || r->condition) {
      std::printf("  cooldown     %lld steps\n", static_cast<long long>(r->cooldown_steps));
    }
    std::printf("  actions      %s\n", actions_text(*r).c_str());
    for (auto [label, test] : {std::pair{"fires on", &r->test_fires}, std::pair{"quiet on", &r->test_quiet}}) {
      for (const auto& [metric, values] : *test) {
        std::string joined;
        for (double v : values) {
          char buffer[32];
          std::snprintf(buffer, sizeof(buffer), "%g", v);
          joined += (joined.empty() ? "" : ", ") + std::string(buffer);
        }
        std::printf("  %-12s %s = [%s]\n", label, metric.c_str(), joined.c_str());
      }
    }
    return EXIT_OK;
  }
  std::fprintf(stderr, "rldk rules explain: no built-in rule '%s' (see `rldk rules list`)\n", id.c_str());
  return EXIT_INPUT_ERROR;
}

int validate_rules(const std::vector<std::string>& files) {
  int code = EXIT_OK;
  for (const auto& file : files) {
    auto rules = load_rules_file(file);
    if (!rules.ok()) {
      std::fprintf(stderr, "%s\n", to_string(rules.error()).c_str());
      code = EXIT_INPUT_ERROR;
      continue;
    }
    for (const auto& w : rules->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    std::printf("%s: %zu rule%s ok\n", file.c_str(), rules->rules.size(), rules->rules.size() == 1 ? "" : "s");
  }
  return code;
}

}  // namespace

void add_rules_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("rules", "Guard rules: list and explain the built-in presets, validate rule files.");
  cmd->require_subcommand(1);
  auto preset = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* list = cmd->add_subcommand("list", "List the built-in presets and their rules");
  list->add_option("--preset", *preset, "Only this preset");
  list->add_flag("--json", *json, "Print JSON (rldk.rules/v1)");
  list->callback([preset, json, &exit_code] { exit_code = list_rules(*preset, *json); });
  auto id = std::make_shared<std::string>();
  CLI::App* explain = cmd->add_subcommand("explain", "Explain a built-in rule: what it watches, when it fires, why");
  explain->add_option("id", *id, "Rule id, e.g. grpo_safe_kl_spike")->required();
  explain->callback([id, &exit_code] { exit_code = explain_rule(*id); });
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* validate = cmd->add_subcommand("validate", "Check rule files; errors give file:line:column");
  validate->add_option("files", *files, "Rule files (YAML)")->required();
  validate->callback([files, &exit_code] { exit_code = validate_rules(*files); });
}

}  // namespace rldk::cli
