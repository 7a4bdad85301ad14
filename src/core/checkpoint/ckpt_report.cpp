// Checkpoint diff as JSON (rldk.ckpt-diff/v1), terminal text and Markdown. Tensor names come from the files and are
// untrusted: Markdown goes through md_text/md_code, terminal text through the CLI's terminal guard.
#include <cmath>
#include <cstdio>

#include "report/markdown_text.h"
#include "rldk/checkpoint.h"

namespace rldk::ckpt {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Json shape_json(const std::vector<uint64_t>& shape) {
  Json::Array a;
  for (uint64_t d : shape) a.emplace_back(d);
  return a;
}

const char* kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::embedding: return "embedding";
    case GroupKind::block: return "block";
    case GroupKind::head: return "head";
    case GroupKind::other: return "other";
  }
  return "other";
}

Json summary_json(const DiffSummary& s) {
  Json j;
  j["tensors_a"] = static_cast<uint64_t>(s.tensors_a);
  j["tensors_b"] = static_cast<uint64_t>(s.tensors_b);
  j["common"] = static_cast<uint64_t>(s.common);
  j["compared"] = static_cast<uint64_t>(s.compared);
  j["only_in_a"] = static_cast<uint64_t>(s.only_in_a);
  j["only_in_b"] = static_cast<uint64_t>(s.only_in_b);
  j["shape_mismatch"] = static_cast<uint64_t>(s.shape_mismatch);
  j["dtype_mismatch"] = static_cast<uint64_t>(s.dtype_mismatch);
  j["identical"] = static_cast<uint64_t>(s.identical);
  j["changed"] = static_cast<uint64_t>(s.changed);
  j["numel_compared"] = s.numel_compared;
  j["bytes_a"] = s.bytes_a;
  j["bytes_b"] = s.bytes_b;
  j["nan_a"] = s.nan_a;
  j["inf_a"] = s.inf_a;
  j["nan_b"] = s.nan_b;
  j["inf_b"] = s.inf_b;
  j["l2"] = s.l2;
  j["norm_a"] = s.norm_a;
  j["relative_change"] = s.relative_change;
  j["cosine"] = s.cosine;
  j["max_abs_delta"] = s.max_abs_delta;
  j["avg_cosine"] = s.avg_cosine;
  j["l2_p05"] = s.l2_p05;
  j["l2_p50"] = s.l2_p50;
  j["l2_p95"] = s.l2_p95;
  return j;
}

Json groups_json(const std::vector<GroupDiff>& groups) {
  Json::Array a;
  for (const auto& g : groups) {
    Json j;
    j["name"] = g.name;
    j["kind"] = kind_name(g.kind);
    if (g.kind == GroupKind::block) j["index"] = g.index;
    j["tensors"] = static_cast<uint64_t>(g.tensors);
    j["changed"] = static_cast<uint64_t>(g.changed);
    j["numel"] = g.numel;
    j["l2"] = g.l2;
    j["norm_a"] = g.norm_a;
    j["relative_change"] = g.relative_change;
    j["cosine"] = g.cosine;
    j["max_abs_delta"] = g.max_abs_delta;
    a.push_back(std::move(j));
  }
  return a;
}

Json tensor_json(const TensorDiff& d) {
  Json j;
  j["name"] = d.name;
  j["status"] = status_name(d.status);
  if (!d.dtype_a.empty()) {
    j["dtype_a"] = d.dtype_a;
    j["shape_a"] = shape_json(d.shape_a);
  }
  if (!d.dtype_b.empty()) {
    j["dtype_b"] = d.dtype_b;
    j["shape_b"] = shape_json(d.shape_b);
  }
  if (!d.note.empty()) j["note"] = d.note;
  bool compared = d.status != TensorStatus::only_in_a && d.status != TensorStatus::only_in_b &&
                  d.status != TensorStatus::shape_mismatch && d.status != TensorStatus::not_compared;
  j["identical_bytes"] = d.identical_bytes;
  if (compared) {
    j["numel"] = d.numel;
    j["l2"] = d.l2;
    j["norm_a"] = d.norm_a;
    j["norm_b"] = d.norm_b;
    j["relative_change"] = d.relative_change;
    j["cosine"] = d.cosine;
    j["max_abs_delta"] = d.max_abs_delta;
    if (!d.max_abs_delta_exact.empty()) j["max_abs_delta_exact"] = d.max_abs_delta_exact;
    j["changed_elements"] = d.changed_elements;
    j["nan_a"] = d.nan_a;
    j["inf_a"] = d.inf_a;
    j["nan_b"] = d.nan_b;
    j["inf_b"] = d.inf_b;
  }
  return j;
}

Json side_json(const std::string& path, const std::string& format, const std::string& label, size_t tensors,
               uint64_t bytes) {
  Json j;
  j["path"] = path;
  j["format"] = format;
  j["label"] = label;
  j["tensors"] = static_cast<uint64_t>(tensors);
  j["bytes"] = bytes;
  return j;
}

std::string verdict(const CheckpointDiff& d) {
  const DiffSummary& s = d.summary;
  if (!d.differs()) return "identical: every tensor has the same values in both checkpoints";
  std::string v = std::to_string(s.changed) + " of " + std::to_string(s.compared) + " compared tensors changed";
  if (s.only_in_a + s.only_in_b > 0) {
    v += ", " + std::to_string(s.only_in_a) + " only in " + d.label_a + ", " + std::to_string(s.only_in_b) + " only in " + d.label_b;
  }
  if (s.shape_mismatch > 0) v += ", " + std::to_string(s.shape_mismatch) + " with different shapes";
  if (s.dtype_mismatch > 0) v += ", " + std::to_string(s.dtype_mismatch) + " with different dtypes";
  return v;
}

std::vector<const TensorDiff*> with_status(const CheckpointDiff& d, TensorStatus status) {
  std::vector<const TensorDiff*> out;
  for (const auto& t : d.tensors) {
    if (t.status == status) out.push_back(&t);
  }
  return out;
}

}  // namespace

Json ckpt_diff_json(const CheckpointDiff& d) {
  Json doc;
  doc["schema"] = CKPT_DIFF_SCHEMA;
  doc["kind"] = "pair";
  doc["a"] = side_json(d.path_a, d.format_a, d.label_a, d.summary.tensors_a, d.summary.bytes_a);
  doc["b"] = side_json(d.path_b, d.format_b, d.label_b, d.summary.tensors_b, d.summary.bytes_b);
  doc["differs"] = d.differs();
  doc["summary"] = summary_json(d.summary);
  doc["groups"] = groups_json(d.groups);
  Json::Array movers;
  for (size_t i : d.top_movers) movers.emplace_back(d.tensors[i].name);
  doc["top_movers"] = std::move(movers);
  Json::Array tensors;
  for (const auto& t : d.tensors) tensors.push_back(tensor_json(t));
  doc["tensors"] = std::move(tensors);
  return doc;
}

std::string ckpt_diff_text(const CheckpointDiff& d, size_t max_rows) {
  const DiffSummary& s = d.summary;
  char line[512];
  std::string out;
  out += d.label_a + ": " + d.path_a + " (" + d.format_a + ", " + std::to_string(s.tensors_a) + " tensors)\n";
  out += d.label_b + ": " + d.path_b + " (" + d.format_b + ", " + std::to_string(s.tensors_b) + " tensors)\n";
  out += verdict(d) + "\n";
  out += "whole model: L2 " + num(s.l2) + ", relative change " + num(s.relative_change) + " of ||" + d.label_a +
         "||, cosine " + num(s.cosine) + ", max |delta| " + num(s.max_abs_delta) + ", avg tensor cosine " +
         num(s.avg_cosine) + "\n";
  out += "tensor L2 percentiles: p05 " + num(s.l2_p05) + ", p50 " + num(s.l2_p50) + ", p95 " + num(s.l2_p95) + "\n";
  if (s.nan_a + s.inf_a + s.nan_b + s.inf_b > 0) {
    out += "non-finite values: " + d.label_a + " " + std::to_string(s.nan_a) + " NaN, " + std::to_string(s.inf_a) +
           " Inf; " + d.label_b + " " + std::to_string(s.nan_b) + " NaN, " + std::to_string(s.inf_b) + " Inf\n";
  }
  out += "\nby layer group:\n";
  std::snprintf(line, sizeof line, "  %-24s %8s %8s %12s %12s %12s\n", "group", "tensors", "changed", "L2", "rel change",
                "cosine");
  out += line;
  for (const auto& g : d.groups) {
    std::snprintf(line, sizeof line, "  %-24s %8zu %8zu %12s %12s %12s\n", g.name.c_str(), g.tensors, g.changed,
                  num(g.l2).c_str(), num(g.relative_change).c_str(), num(g.cosine).c_str());
    out += line;
  }
  if (!d.top_movers.empty()) {
    out += "\ntop movers (L2 of the difference):\n";
    size_t n = 0;
    for (size_t i : d.top_movers) {
      if (n++ >= max_rows) break;
      const TensorDiff& t = d.tensors[i];
      out += "  " + t.name + "  L2 " + num(t.l2) + "  rel " + num(t.relative_change) + "  cos " + num(t.cosine) +
             "  max|d| " + num(t.max_abs_delta) + (t.nan_a + t.nan_b + t.inf_a + t.inf_b > 0 ? "  (non-finite values)" : "") + "\n";
    }
  }
  auto list = [&](TensorStatus st, const std::string& title) {
    auto items = with_status(d, st);
    if (items.empty()) return;
    out += "\n" + title + " (" + std::to_string(items.size()) + "):\n";
    for (size_t k = 0; k < items.size() && k < max_rows; ++k) {
      const TensorDiff& t = *items[k];
      out += "  " + t.name;
      if (st == TensorStatus::shape_mismatch) out += "  " + shape_text(t.shape_a) + " vs " + shape_text(t.shape_b);
      out += "\n";
    }
    if (items.size() > max_rows) out += "  ... " + std::to_string(items.size() - max_rows) + " more (see --json)\n";
  };
  list(TensorStatus::only_in_a, "only in " + d.label_a);
  list(TensorStatus::only_in_b, "only in " + d.label_b);
  list(TensorStatus::shape_mismatch, "shape differs");
  return out;
}

std::string ckpt_diff_markdown(const CheckpointDiff& d) {
  const DiffSummary& s = d.summary;
  std::string out = "# Checkpoint diff\n\n";
  out += "- " + md_text(d.label_a) + ": " + md_code(d.path_a) + " (" + md_text(d.format_a) + ", " +
         std::to_string(s.tensors_a) + " tensors)\n";
  out += "- " + md_text(d.label_b) + ": " + md_code(d.path_b) + " (" + md_text(d.format_b) + ", " +
         std::to_string(s.tensors_b) + " tensors)\n";
  out += "- **" + md_text(verdict(d)) + "**\n";
  out += "- whole model: L2 " + num(s.l2) + ", relative change " + num(s.relative_change) + ", cosine " +
         num(s.cosine) + ", max |delta| " + num(s.max_abs_delta) + ", average tensor cosine " + num(s.avg_cosine) + "\n";
  out += "- tensor L2 percentiles: p05 " + num(s.l2_p05) + ", p50 " + num(s.l2_p50) + ", p95 " + num(s.l2_p95) + "\n";
  if (s.nan_a + s.inf_a + s.nan_b + s.inf_b > 0) {
    out += "- non-finite values: " + md_text(d.label_a) + " " + std::to_string(s.nan_a) + " NaN, " +
           std::to_string(s.inf_a) + " Inf; " + md_text(d.label_b) + " " + std::to_string(s.nan_b) + " NaN, " +
           std::to_string(s.inf_b) + " Inf\n";
  }
  out += "\n## By layer group\n\n| group | tensors | changed | L2 | relative change | cosine | max abs delta |\n"
         "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& g : d.groups) {
    out += "| " + md_text(g.name) + " | " + std::to_string(g.tensors) + " | " + std::to_string(g.changed) + " | " +
           num(g.l2) + " | " + num(g.relative_change) + " | " + num(g.cosine) + " | " + num(g.max_abs_delta) + " |\n";
  }
  if (!d.top_movers.empty()) {
    out += "\n## Top movers\n\n| tensor | L2 | relative change | cosine | max abs delta | NaN/Inf (A/B) |\n"
           "|---|---:|---:|---:|---:|---|\n";
    for (size_t i : d.top_movers) {
      const TensorDiff& t = d.tensors[i];
      out += "| " + md_code(t.name) + " | " + num(t.l2) + " | " + num(t.relative_change) + " | " + num(t.cosine) +
             " | " + num(t.max_abs_delta) + " | " + std::to_string(t.nan_a + t.inf_a) + "/" +
             std::to_string(t.nan_b + t.inf_b) + " |\n";
    }
  }
  auto list = [&](TensorStatus st, const std::string& title) {
    auto items = with_status(d, st);
    if (items.empty()) return;
    out += "\n## " + md_text(title) + " (" + std::to_string(items.size()) + ")\n\n";
    for (const auto* t : items) {
      out += "- " + md_code(t->name);
      if (st == TensorStatus::shape_mismatch) out += " " + shape_text(t->shape_a) + " vs " + shape_text(t->shape_b);
      out += "\n";
    }
  };
  list(TensorStatus::only_in_a, "Only in " + d.label_a);
  list(TensorStatus::only_in_b, "Only in " + d.label_b);
  list(TensorStatus::shape_mismatch, "Shape differs");
  return out;
}

Json ckpt_series_json(const SeriesDiff& series) {
  Json doc;
  doc["schema"] = CKPT_DIFF_SCHEMA;
  doc["kind"] = "series";
  doc["run_dir"] = series.run_dir;
  doc["baseline"] = series.baseline;
  Json::Array cks;
  for (size_t i = 0; i < series.checkpoints.size(); ++i) {
    Json c;
    c["path"] = series.checkpoints[i];
    c["step"] = series.steps[i];
    cks.push_back(std::move(c));
  }
  doc["checkpoints"] = std::move(cks);
  Json::Array points;
  for (const auto& p : series.points) {
    Json j;
    j["step"] = p.step;
    j["path"] = p.path;
    j["against"] = p.diff.path_a;
    j["differs"] = p.diff.differs();
    j["summary"] = summary_json(p.diff.summary);
    j["groups"] = groups_json(p.diff.groups);
    Json::Array movers;
    for (size_t i : p.diff.top_movers) movers.emplace_back(p.diff.tensors[i].name);
    j["top_movers"] = std::move(movers);
    points.push_back(std::move(j));
  }
  doc["points"] = std::move(points);
  return doc;
}

std::string ckpt_series_text(const SeriesDiff& series) {
  std::string out = series.run_dir + ": " + std::to_string(series.checkpoints.size()) + " checkpoints, each against " +
                    (series.baseline == "first" ? "the first (step " + std::to_string(series.steps[0]) + ")"
                                                : std::string("the one before it")) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %10s %12s %12s %10s %8s  %s\n", "step", "L2", "rel change", "cosine", "changed",
                "top mover");
  out += line;
  for (const auto& p : series.points) {
    const DiffSummary& s = p.diff.summary;
    std::string top = p.diff.top_movers.empty() ? "-" : p.diff.tensors[p.diff.top_movers[0]].name;
    std::snprintf(line, sizeof line, "  %10lld %12s %12s %10s %8zu  ", static_cast<long long>(p.step), num(s.l2).c_str(),
                  num(s.relative_change).c_str(), num(s.cosine).c_str(), s.changed);
    out += line + top + "\n";
  }
  if (!series.points.empty()) {
    out += "\nrelative change by layer group at the last checkpoint:\n";
    for (const auto& g : series.points.back().diff.groups) {
      std::snprintf(line, sizeof line, "  %-24s %12s\n", g.name.c_str(), num(g.relative_change).c_str());
      out += line;
    }
  }
  return out;
}

std::string ckpt_series_markdown(const SeriesDiff& series) {
  std::string out = "# Checkpoint drift over training\n\n";
  out += "- run: " + md_code(series.run_dir) + "\n- " + std::to_string(series.checkpoints.size()) +
         " checkpoints, each compared with " +
         (series.baseline == "first" ? "the first (step " + std::to_string(series.steps[0]) + ")"
                                     : std::string("the one before it")) + "\n\n";
  out += "| step | L2 | relative change | cosine | changed tensors | top mover |\n|---:|---:|---:|---:|---:|---|\n";
  for (const auto& p : series.points) {
    const DiffSummary& s = p.diff.summary;
    out += "| " + std::to_string(p.step) + " | " + num(s.l2) + " | " + num(s.relative_change) + " | " +
           num(s.cosine) + " | " + std::to_string(s.changed) + " | " +
           (p.diff.top_movers.empty() ? std::string("-") : md_code(p.diff.tensors[p.diff.top_movers[0]].name)) + " |\n";
  }
  if (!series.points.empty()) {
    out += "\n## Relative change by layer group\n\n| group |";
    std::string rule = "|---|";
    for (const auto& p : series.points) {
      out += " " + std::to_string(p.step) + " |";
      rule += "---:|";
    }
    out += "\n" + rule + "\n";
    for (const auto& g : series.points.back().diff.groups) {
      out += "| " + md_text(g.name) + " |";
      for (const auto& p : series.points) {
        std::string cell = "-";
        for (const auto& h : p.diff.groups) {
          if (h.name == g.name) cell = num(h.relative_change);
        }
        out += " " + cell + " |";
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace rldk::ckpt
