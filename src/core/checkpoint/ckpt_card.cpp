// The checkpoint diff card (HTML): verdict, whole-model tiles, a per-layer profile of the relative change (blocks in
// order, so a drift concentrated in the last layers or the head shows at a glance), the group table with a bar per
// layer group, and top movers.
// All text goes through HtmlPage, which escapes it: tensor names are untrusted.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "rldk/checkpoint.h"
#include "rldk/html_page.h"

namespace rldk::ckpt {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// x: position in group order (embedding, blocks, head, other); the blocks keep their own index on the axis.
LineChart layer_profile(const std::vector<GroupDiff>& groups, const std::string& title) {
  LineChart chart;
  chart.title = title;
  chart.x_label = "block (embedding at -1, head and other after the last block)";
  chart.y_label = "relative change";
  ChartSeries blocks{"transformer blocks", {}, {}, false};
  ChartSeries ends{"embedding / head / other", {}, {}, true};
  int64_t last_block = -1;
  for (const auto& g : groups) {
    if (g.kind == GroupKind::block) last_block = std::max(last_block, g.index);
  }
  int64_t after = last_block + 1;
  for (const auto& g : groups) {
    double x = 0;
    if (g.kind == GroupKind::block) {
      blocks.steps.push_back(static_cast<double>(g.index));
      blocks.values.push_back(g.relative_change);
      continue;
    }
    x = g.kind == GroupKind::embedding ? -1.0 : static_cast<double>(after++);
    ends.steps.push_back(x);
    ends.values.push_back(g.relative_change);
  }
  if (!blocks.steps.empty()) chart.series.push_back(std::move(blocks));
  if (!ends.steps.empty()) chart.series.push_back(std::move(ends));
  return chart;
}

void group_table(HtmlPage& page, const std::vector<GroupDiff>& groups) {
  BarChart bars;
  bars.title = "Relative change per layer group";
  bars.value_label = "||B - A|| / ||A|| over the group's tensors";
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    bars.bars.push_back({g.name, g.relative_change, g.changed > 0 ? ChartTone::Info : ChartTone::Neutral});
    rows.push_back({g.name, std::to_string(g.tensors), std::to_string(g.changed), num(g.l2), num(g.relative_change),
                    num(g.cosine), num(g.max_abs_delta)});
  }
  page.bars(bars);
  page.table({"group", "tensors", "changed", "L2", "relative change", "cosine", "max |delta|"}, rows);
}

}  // namespace

std::string ckpt_diff_html(const CheckpointDiff& d) {
  const DiffSummary& s = d.summary;
  HtmlPage page("Checkpoint diff: " + d.label_a + " vs " + d.label_b, d.path_a + "  vs  " + d.path_b);
  std::string verdict = d.differs() ? std::to_string(s.changed) + " of " + std::to_string(s.compared) +
                                          " compared tensors changed"
                                    : "every tensor has the same values";
  page.verdict(d.differs() ? "CHANGED" : "IDENTICAL", verdict, d.differs() ? ChartTone::Info : ChartTone::Good);
  page.facts({{d.label_a, d.path_a + " (" + d.format_a + ", " + std::to_string(s.tensors_a) + " tensors)"},
              {d.label_b, d.path_b + " (" + d.format_b + ", " + std::to_string(s.tensors_b) + " tensors)"},
              {"only in " + d.label_a, std::to_string(s.only_in_a)},
              {"only in " + d.label_b, std::to_string(s.only_in_b)},
              {"shape / dtype differs", std::to_string(s.shape_mismatch) + " / " + std::to_string(s.dtype_mismatch)},
              {"NaN/Inf", d.label_a + " " + std::to_string(s.nan_a + s.inf_a) + ", " + d.label_b + " " +
                              std::to_string(s.nan_b + s.inf_b)}});
  page.tiles({{"relative change", num(s.relative_change), "||B - A|| / ||A||, whole model",
               s.relative_change > 0 ? ChartTone::Info : ChartTone::Good},
              {"L2", num(s.l2), "||B - A||", ChartTone::Neutral},
              {"cosine", num(s.cosine), "whole model", ChartTone::Neutral},
              {"avg tensor cosine", num(s.avg_cosine), "mean over compared tensors", ChartTone::Neutral},
              {"max |delta|", num(s.max_abs_delta), "largest element change", ChartTone::Neutral}});
  page.heading("Per-layer change");
  // The profile across depth says something only when there are transformer blocks to line up; the bars always do.
  bool has_blocks = std::any_of(d.groups.begin(), d.groups.end(),
                                [](const GroupDiff& g) { return g.kind == GroupKind::block; });
  if (has_blocks) page.chart(layer_profile(d.groups, "Relative change by depth"));
  group_table(page, d.groups);
  if (!d.top_movers.empty()) {
    page.heading("Top movers");
    std::vector<std::vector<std::string>> rows;
    for (size_t i : d.top_movers) {
      const TensorDiff& t = d.tensors[i];
      rows.push_back({t.name, num(t.l2), num(t.relative_change), num(t.cosine), num(t.max_abs_delta),
                      std::to_string(t.nan_a + t.inf_a) + "/" + std::to_string(t.nan_b + t.inf_b)});
    }
    page.table({"tensor", "L2", "relative change", "cosine", "max |delta|", "NaN/Inf A/B"}, rows);
  }
  std::vector<std::string> odd;
  for (const auto& t : d.tensors) {
    if (t.status == TensorStatus::only_in_a) odd.push_back(t.name + ": only in " + d.label_a);
    if (t.status == TensorStatus::only_in_b) odd.push_back(t.name + ": only in " + d.label_b);
    if (t.status == TensorStatus::shape_mismatch) odd.push_back(t.name + ": shape differs");
    if (odd.size() >= 200) break;
  }
  if (!odd.empty()) {
    page.heading("Keys and shapes that differ");
    page.bullet_list(odd);
  }
  page.muted("Statistics are computed in double precision over the positions where both values are finite; NaN and "
             "Inf are counted separately.");
  return page.str();
}

std::string ckpt_series_html(const SeriesDiff& series) {
  HtmlPage page("Checkpoint drift over training", series.run_dir);
  page.paragraph(std::to_string(series.checkpoints.size()) + " checkpoints, each compared with " +
                 (series.baseline == "first" ? "the first (step " + std::to_string(series.steps[0]) + ")"
                                             : std::string("the one before it")) + ".");
  LineChart whole;
  whole.title = "Whole-model relative change";
  whole.y_label = "relative change";
  ChartSeries total{"whole model", {}, {}, false};
  std::map<std::string, ChartSeries> by_group;
  std::vector<std::string> order;
  for (const auto& p : series.points) {
    total.steps.push_back(static_cast<double>(p.step));
    total.values.push_back(p.diff.summary.relative_change);
    for (const auto& g : p.diff.groups) {
      auto [it, inserted] = by_group.try_emplace(g.name, ChartSeries{g.name, {}, {}, false});
      if (inserted) order.push_back(g.name);
      it->second.steps.push_back(static_cast<double>(p.step));
      it->second.values.push_back(g.relative_change);
    }
  }
  whole.series.push_back(std::move(total));
  page.chart(whole);
  LineChart groups;
  groups.title = "Relative change by layer group";
  groups.y_label = "relative change";
  for (const auto& name : order) groups.series.push_back(std::move(by_group[name]));
  page.chart(groups);
  if (!series.points.empty()) {
    page.chart(layer_profile(series.points.back().diff.groups,
                             "Per-layer profile at step " + std::to_string(series.points.back().step)));
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : series.points) {
    const DiffSummary& s = p.diff.summary;
    rows.push_back({std::to_string(p.step), num(s.l2), num(s.relative_change), num(s.cosine), std::to_string(s.changed),
                    p.diff.top_movers.empty() ? "-" : p.diff.tensors[p.diff.top_movers[0]].name});
  }
  page.table({"step", "L2", "relative change", "cosine", "changed tensors", "top mover"}, rows);
  return page.str();
}

}  // namespace rldk::ckpt
