// rldk metrics list | explain NAME: the canonical metric dictionary.
#include <algorithm>
#include <cstdio>

#include "commands.h"
#include "rldk/json.h"
#include "rldk/metric_dictionary.h"

namespace rldk::cli {
namespace {

Json metric_json(const MetricInfo& m) {
  Json j;
  j["name"] = m.name;
  j["unit"] = m.unit;
  j["aggregation"] = m.aggregation;
  j["description"] = m.description;
  Json aliases = Json::Object{};
  for (const auto& [framework, names] : m.aliases) {
    Json list = Json::Array{};
    for (const auto& n : names) list.push_back(n);
    aliases[framework] = list;
  }
  j["aliases"] = aliases;
  return j;
}

int list_metrics(bool json) {
  const auto& dict = MetricDictionary::builtin();
  if (json) {
    Json out;
    out["schema"] = "rldk.metrics/v1";
    Json list = Json::Array{};
    for (const auto& m : dict.metrics()) list.push_back(metric_json(m));
    out["metrics"] = list;
    std::fputs(out.dump().c_str(), stdout);
    return EXIT_OK;
  }
  size_t width = 0;
  for (const auto& m : dict.metrics()) width = std::max(width, m.name.size());
  for (const auto& m : dict.metrics()) {
    std::printf("%-*s  %-18s %s\n", static_cast<int>(width), m.name.c_str(), m.unit.c_str(), m.aggregation.c_str());
  }
  std::printf("\n%zu canonical metrics. `rldk metrics explain NAME` for one of them or for a raw name.\n",
              dict.metrics().size());
  return EXIT_OK;
}

int explain_metric(const std::string& name, bool json) {
  const auto& dict = MetricDictionary::builtin();
  std::string canonical = dict.canonical_name(name);
  const MetricInfo* info = dict.find(canonical);
  if (json) {
    Json out;
    out["schema"] = "rldk.metric/v1";
    out["query"] = name;
    out["canonical_name"] = canonical;
    out["known"] = info != nullptr;
    if (info) out["metric"] = metric_json(*info);
    std::fputs(out.dump().c_str(), stdout);
    return info ? EXIT_OK : EXIT_INPUT_ERROR;
  }
  if (info == nullptr) {
    std::printf("'%s' is not in the metric dictionary; rldk keeps it as '%s'.\n", name.c_str(), canonical.c_str());
    return EXIT_INPUT_ERROR;
  }
  if (canonical != name) std::printf("'%s' is read as %s\n\n", name.c_str(), canonical.c_str());
  std::printf("%s\n  %s\n\n  unit         %s\n  aggregation  %s\n  aliases\n", info->name.c_str(),
              info->description.c_str(), info->unit.c_str(), info->aggregation.c_str());
  for (const auto& [framework, names] : info->aliases) {
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
    std::printf("    %-10s %s\n", framework.c_str(), joined.c_str());
  }
  return EXIT_OK;
}

}  // namespace

void add_metrics_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("metrics", "The canonical metric dictionary: names, units, aggregations and the "
                                                "aliases each framework logs them under.");
  cmd->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  CLI::App* list = cmd->add_subcommand("list", "List canonical metrics with unit and aggregation");
  list->add_flag("--json", *json, "Print JSON (rldk.metrics/v1)");
  list->callback([json, &exit_code] { exit_code = list_metrics(*json); });
  auto name = std::make_shared<std::string>();
  auto explain_json = std::make_shared<bool>(false);
  CLI::App* explain = cmd->add_subcommand("explain", "Explain a canonical metric, or what a raw name maps to");
  explain->add_option("name", *name, "A canonical name (policy/kl) or a raw name as logged (kl, actor/ppo_kl)")
      ->required();
  explain->add_flag("--json", *explain_json, "Print JSON (rldk.metric/v1)");
  explain->callback([name, explain_json, &exit_code] { exit_code = explain_metric(*name, *explain_json); });
}

}  // namespace rldk::cli
