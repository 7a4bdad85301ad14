// The rldk.reward-drift/v1 JSON and the Markdown of `rldk reward drift` (data escaped: prompts are untrusted).
#include <cmath>

#include "report/markdown_text.h"
#include "reward/report_parts.h"
#include "reward/sample_table.h"
#include "rldk/reward_drift.h"

namespace rldk {
namespace {

using reward::correlation_json;
using reward::correlation_text;
using reward::json_number;

}  // namespace

Json reward_drift_json(const RewardDriftReport& r) {
  Json doc;
  doc["schema"] = REWARD_DRIFT_SCHEMA;
  doc["verdict"] = r.verdict;
  doc["summary"] = r.summary;
  Json a, b;
  a["column"] = r.column_a;
  a["format"] = r.format_a;
  a["rows"] = r.rows_a;
  a["unpaired"] = r.unpaired_a;
  a["mean"] = json_number(r.mean_a);
  b["column"] = r.column_b;
  b["format"] = r.format_b;
  b["rows"] = r.rows_b;
  b["unpaired"] = r.unpaired_b;
  b["mean"] = json_number(r.mean_b);
  doc["a"] = a;
  doc["b"] = b;
  doc["paired"] = r.paired;
  doc["prompts"] = r.prompts;
  doc["prompt_groups"] = r.prompt_groups;
  doc["pearson"] = correlation_json(r.pearson);
  doc["spearman"] = correlation_json(r.spearman);
  doc["within_pearson"] = correlation_json(r.within_pearson);
  doc["within_spearman"] = correlation_json(r.within_spearman);
  doc["within_reason"] = r.within_reason.empty() ? Json() : Json(r.within_reason);
  Json pairs;
  pairs["pairs"] = r.pairs;
  pairs["tied"] = r.pairs_tied;
  pairs["ranking_agreement"] = json_number(r.ranking_agreement);
  pairs["within_kendall"] = json_number(r.within_kendall);
  pairs["sign_flip_rate"] = json_number(r.sign_flip_rate);
  doc["same_prompt_pairs"] = pairs;
  Json fit;
  fit["slope"] = json_number(r.slope);
  fit["intercept"] = json_number(r.intercept);
  fit["within_slope"] = json_number(r.within_slope);
  doc["scale_fit"] = fit;
  Json diff;
  diff["mean"] = json_number(r.mean_difference);
  diff["sd"] = json_number(r.sd_difference);
  diff["ci_low"] = json_number(r.ci_low);
  diff["ci_high"] = json_number(r.ci_high);
  diff["t_p_value"] = json_number(r.t_p_value);
  diff["effect_size_dz"] = json_number(r.effect_size_dz);
  doc["difference"] = diff;
  Json older;
  older["drift_magnitude"] = json_number(r.drift_magnitude);
  older["mae_z"] = json_number(r.mae_z);
  older["l2_z"] = json_number(r.l2_z);
  older["sign_disagreement"] = json_number(r.sign_disagreement);
  doc["older_tool_fields"] = older;
  Json slices = Json::Array{};
  for (const auto& s : r.slices) {
    Json j;
    j["name"] = s.name;
    j["pattern"] = s.pattern;
    j["n"] = s.n;
    j["mean_difference"] = json_number(s.mean_difference);
    j["ci_low"] = json_number(s.ci_low);
    j["ci_high"] = json_number(s.ci_high);
    slices.push_back(std::move(j));
  }
  doc["slices"] = std::move(slices);
  Json examples = Json::Array{};
  for (const auto& e : r.examples) {
    Json j;
    j["prompt"] = e.prompt;
    j["completion"] = e.completion;
    j["a"] = json_number(e.a);
    j["b"] = json_number(e.b);
    j["z_a"] = json_number(e.z_a);
    j["z_b"] = json_number(e.z_b);
    examples.push_back(std::move(j));
  }
  doc["examples"] = std::move(examples);
  Json profile = Json::Array{};
  for (const auto& bin : r.profile) {
    Json j;
    j["n"] = bin.n;
    j["a_mean"] = json_number(bin.a_mean);
    j["b_mean"] = json_number(bin.b_mean);
    profile.push_back(std::move(j));
  }
  doc["profile"] = std::move(profile);
  return doc;
}

std::string reward_drift_markdown(const RewardDriftReport& r) {
  using reward::format_number;
  std::string md = "# rldk reward drift\n\nVerdict: **" + r.verdict + "**. " + md_text(r.summary) + "\n\n";
  md += "A: " + md_code(r.column_a) + " (" + md_text(r.format_a) + "), B: " + md_code(r.column_b) + " (" +
        md_text(r.format_b) + "); " + std::to_string(r.paired) + " paired samples over " + std::to_string(r.prompts) +
        " prompts (" + std::to_string(r.unpaired_a) + " only in A, " + std::to_string(r.unpaired_b) + " only in B).\n\n";
  md += "| statistic | value |\n|---|---|\n";
  md += "| Pearson | " + correlation_text(r.pearson) + " |\n";
  md += "| Spearman | " + correlation_text(r.spearman) + " |\n";
  md += "| Pearson within prompt | " + (r.within_reason.empty() ? correlation_text(r.within_pearson) : md_text(r.within_reason)) + " |\n";
  md += "| Spearman within prompt | " + (r.within_reason.empty() ? correlation_text(r.within_spearman) : "n/a") + " |\n";
  md += "| same-prompt pairs ordered alike | " +
        (r.pairs - r.pairs_tied == 0 ? std::string("n/a (no untied same-prompt pair)")
                                     : format_number(100 * r.ranking_agreement) + "% of " +
                                           std::to_string(r.pairs - r.pairs_tied) + " (" +
                                           std::to_string(r.pairs_tied) + " tied)") +
        " |\n";
  md += "| Kendall tau-b within prompt | " + format_number(r.within_kendall) + " |\n";
  md += "| B = a + b A | b = " + format_number(r.slope) + ", a = " + format_number(r.intercept) +
        "; within prompt b = " + format_number(r.within_slope) + " |\n";
  md += "| mean B - A (paired) | " + format_number(r.mean_difference) + " [" + format_number(r.ci_low) + ", " +
        format_number(r.ci_high) + "] (bootstrap), t-test p = " + format_number(r.t_p_value, 2) + ", d_z = " +
        format_number(r.effect_size_dz) + " |\n";
  md += "| older tool's fields | drift magnitude " + format_number(r.drift_magnitude) + ", MAE of z " +
        format_number(r.mae_z) + ", sign disagreement " + format_number(r.sign_disagreement) + " |\n";
  if (!r.slices.empty()) {
    md += "\n| slice | pattern | n | mean B - A |\n|---|---|---:|---|\n";
    for (const auto& s : r.slices) {
      md += "| " + md_text(s.name) + " | " + md_code(s.pattern) + " | " + std::to_string(s.n) + " | " +
            format_number(s.mean_difference) + " [" + format_number(s.ci_low) + ", " + format_number(s.ci_high) +
            "] |\n";
    }
  }
  if (!r.examples.empty()) {
    md += "\n## Where they disagree most\n\n";
    for (const auto& e : r.examples) {
      md += "- A " + format_number(e.a) + " (z " + format_number(e.z_a) + "), B " + format_number(e.b) + " (z " +
            format_number(e.z_b) + "): prompt " + md_code(e.prompt) +
            (e.completion.empty() ? "" : ", completion " + md_code(e.completion)) + "\n";
    }
  }
  return md;
}

}  // namespace rldk
