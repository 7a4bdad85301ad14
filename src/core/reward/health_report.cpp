// The reward health report as JSON (rldk.reward-health/v1) and Markdown. Reward column names and quoted texts come
// from the data and are untrusted: Markdown puts them through md_text / md_code.
#include <cmath>
#include <cstdio>

#include "report/markdown_text.h"
#include "reward/report_parts.h"
#include "reward/sample_table.h"

namespace rldk {
namespace {

using reward::correlation_json;
using reward::json_number;

Json check_json(const RewardCheck& c) {
  Json j;
  j["status"] = reward_check_status_name(c.status);
  j["severity"] = c.status == RewardCheckStatus::finding ? Json(severity_name(c.severity)) : Json(nullptr);
  j["message"] = c.message;
  j["reason"] = c.status == RewardCheckStatus::not_measurable ? Json(c.reason) : Json(nullptr);
  return j;
}

Json saturation_json(const SaturationCheck& c) {
  Json j = check_json(c);
  j["lo"] = json_number(c.lo);
  j["hi"] = json_number(c.hi);
  j["range_declared"] = c.range_declared;
  j["eps"] = json_number(c.eps);
  j["samples"] = c.samples;
  j["late_samples"] = c.late_samples;
  j["late_first_step"] = c.late_first_step;
  j["share_low"] = json_number(c.share_low);
  j["share_high"] = json_number(c.share_high);
  j["late_share_low"] = json_number(c.late_share_low);
  j["late_share_high"] = json_number(c.late_share_high);
  j["outside_range"] = c.outside_range;
  j["levels"] = c.levels;  // up to 12; at most 11: a graded reward, judged with the pass/fail thresholds
  return j;
}

Json zero_variance_json(const ZeroVarianceCheck& c) {
  Json j = check_json(c);
  j["groups"] = c.groups;
  j["zero_variance_groups"] = c.zero_variance_groups;
  j["observed_share"] = json_number(c.observed_share);
  j["binary"] = c.binary;
  j["expected_share"] = json_number(c.expected_share);
  j["excess"] = json_number(c.excess);
  j["excess_z"] = json_number(c.excess_z);
  return j;
}

Json length_bias_json(const LengthBiasCheck& c) {
  Json j = check_json(c);
  j["samples"] = c.samples;
  j["pearson"] = correlation_json(c.pearson);
  j["spearman"] = correlation_json(c.spearman);
  j["within_pearson"] = correlation_json(c.within_pearson);
  j["within_spearman"] = correlation_json(c.within_spearman);
  j["within_groups"] = c.within_groups;
  j["within_reason"] = c.within_reason.empty() ? Json(nullptr) : Json(c.within_reason);
  Json g;
  g["early_last_step"] = c.early_last_step;
  g["late_first_step"] = c.late_first_step;
  g["early_samples"] = c.early_samples;
  g["late_samples"] = c.late_samples;
  g["early_mean"] = json_number(c.early_mean);
  g["late_mean"] = json_number(c.late_mean);
  g["delta_reward"] = json_number(c.delta_reward);
  g["non_length_gain"] = json_number(c.non_length_gain);
  g["nrg_share"] = json_number(c.nrg_share);
  g["length_share"] = json_number(c.length_share);
  g["bins_used"] = c.bins_used;
  g["late_share_in_bins"] = json_number(c.late_share_in_bins);
  g["reason"] = c.gain_reason.empty() ? Json(nullptr) : Json(c.gain_reason);
  j["stratified_gain"] = g;
  return j;
}

Json drift_json(const DriftCheck& c) {
  Json j = check_json(c);
  j["early_last_step"] = c.early_last_step;
  j["late_first_step"] = c.late_first_step;
  j["early_samples"] = c.early_samples;
  j["late_samples"] = c.late_samples;
  j["early_mean"] = json_number(c.early_mean);
  j["late_mean"] = json_number(c.late_mean);
  j["early_std"] = json_number(c.early_std);
  j["ks_statistic"] = json_number(c.ks_statistic);
  j["ks_p_value"] = json_number(c.ks_p_value);
  j["wasserstein"] = json_number(c.wasserstein);
  j["wasserstein_early_std"] = json_number(c.wasserstein_early_std);
  return j;
}

Json gold_json(const GoldCheck& c) {
  Json j = check_json(c);
  j["samples"] = c.samples;
  j["spearman"] = correlation_json(c.spearman);
  Json steps = Json::Array{};
  for (const auto& s : c.steps) {
    Json e;
    e["step"] = s.step;
    e["samples"] = s.samples;
    e["proxy_mean"] = json_number(s.proxy_mean);
    e["gold_mean"] = json_number(s.gold_mean);
    e["kl"] = json_number(s.kl);
    steps.push_back(e);
  }
  j["steps"] = steps;
  j["window_first_step"] = c.window_first_step;
  j["window_steps"] = c.window_steps;
  j["proxy_slope"] = json_number(c.proxy_slope);
  j["proxy_slope_p"] = json_number(c.proxy_slope_p);
  j["gold_slope"] = json_number(c.gold_slope);
  j["gold_slope_p"] = json_number(c.gold_slope_p);
  j["kl_metric"] = c.kl_metric.empty() ? Json(nullptr) : Json(c.kl_metric);
  j["fit_points"] = c.fit_points;
  j["fit_r0"] = json_number(c.fit_r0);
  j["fit_alpha"] = json_number(c.fit_alpha);
  j["fit_beta"] = json_number(c.fit_beta);
  j["fit_r2"] = json_number(c.fit_r2);
  j["peak_kl"] = json_number(c.peak_kl);
  j["peak_gold"] = json_number(c.peak_gold);
  j["last_kl"] = json_number(c.last_kl);
  j["past_peak"] = c.past_peak;
  j["fit_reason"] = c.fit_reason.empty() ? Json(nullptr) : Json(c.fit_reason);
  return j;
}

Json suspicious_json(const SuspiciousCheck& c) {
  Json j = check_json(c);
  j["candidates"] = c.candidates;
  Json samples = Json::Array{};
  for (const auto& s : c.samples) {
    Json e;
    e["source"] = s.source;
    e["row"] = s.row;
    e["step"] = s.step;
    e["reward"] = json_number(s.reward);
    e["length_chars"] = s.length_chars;
    e["length_words"] = s.length_words;
    e["length_z"] = json_number(s.length_z);
    e["repetition"] = s.repetition;
    Json reasons = Json::Array{};
    for (const auto& r : s.reasons) reasons.push_back(r);
    e["reasons"] = reasons;
    e["text"] = s.text_kept ? Json(s.text) : Json(nullptr);
    e["text_truncated"] = s.text_truncated;
    e["prompt"] = s.text_kept ? Json(s.prompt) : Json(nullptr);
    e["prompt_truncated"] = s.prompt_truncated;
    samples.push_back(e);
  }
  j["samples"] = samples;
  return j;
}

Json shortcut_json(const ShortcutFeaturesCheck& c) {
  Json j = check_json(c);
  j["samples"] = c.samples;
  j["groups"] = c.groups;
  j["df"] = c.df;
  j["joint_r2"] = json_number(c.joint_r2);
  j["joint_features"] = c.joint_features;
  Json features = Json::Array{};
  for (const auto& f : c.features) {
    Json e;
    e["name"] = f.name;
    e["kind"] = f.kind;
    e["judged"] = f.judged;
    e["mean"] = json_number(f.mean);
    e["present_share"] = json_number(f.present_share);
    e["r"] = json_number(f.r);
    e["r2"] = json_number(f.r2);
    e["p_value"] = json_number(f.p_value);
    e["partial_r"] = json_number(f.partial_r);
    e["partial_r2"] = json_number(f.partial_r2);
    e["partial_p_value"] = json_number(f.partial_p_value);
    e["joint_coefficient"] = json_number(f.joint_coefficient);
    e["flagged"] = f.flagged;
    e["reason"] = f.reason.empty() ? Json(nullptr) : Json(f.reason);
    Json examples = Json::Array{};
    for (const auto& x : f.examples) {
      Json q;
      q["source"] = x.source;
      q["row"] = x.row;
      q["step"] = x.step;
      q["reward"] = json_number(x.reward);
      q["value"] = json_number(x.value);
      q["text"] = x.text_kept ? Json(x.text) : Json(nullptr);
      q["text_truncated"] = x.text_truncated;
      examples.push_back(q);
    }
    e["examples"] = examples;
    features.push_back(e);
  }
  j["features"] = features;
  return j;
}

Json calibration_json(const CalibrationCheck& c) {
  Json j = check_json(c);
  j["pairs"] = c.pairs;
  j["label_ties"] = c.label_ties;
  j["unscored"] = c.unscored;
  j["score_ties"] = c.score_ties;
  j["accuracy"] = json_number(c.accuracy);
  j["accuracy_ci_low"] = json_number(c.accuracy_ci_low);
  j["accuracy_ci_high"] = json_number(c.accuracy_ci_high);
  j["accuracy_p_value"] = json_number(c.accuracy_p_value);
  j["log_loss"] = json_number(c.log_loss);
  j["brier"] = json_number(c.brier);
  j["ece"] = json_number(c.ece);
  j["ece_ci_low"] = json_number(c.ece_ci_low);
  j["ece_ci_high"] = json_number(c.ece_ci_high);
  j["adaptive_ece"] = json_number(c.adaptive_ece);
  j["extreme_share"] = json_number(c.extreme_share);
  j["temperature"] = json_number(c.temperature);
  j["temperature_reason"] = c.temperature_reason.empty() ? Json(nullptr) : Json(c.temperature_reason);
  j["log_loss_at_temperature"] = json_number(c.log_loss_at_temperature);
  j["ece_at_temperature"] = json_number(c.ece_at_temperature);
  Json bins = Json::Array{};
  for (const auto& b : c.bins) {
    Json bin;
    bin["lo"] = b.lo;
    bin["hi"] = b.hi;
    bin["pairs"] = b.pairs;
    bin["confidence"] = json_number(b.confidence);
    bin["accuracy"] = json_number(b.accuracy);
    bins.push_back(std::move(bin));
  }
  j["bins"] = std::move(bins);
  Json wrong = Json::Array{};
  for (const auto& w : c.confidently_wrong) {
    Json x;
    x["source"] = w.source;
    x["row"] = w.row;
    x["first_score"] = json_number(w.first_score);
    x["second_score"] = json_number(w.second_score);
    x["label"] = json_number(w.label);
    x["confidence"] = json_number(w.confidence);
    x["prompt"] = w.prompt;
    x["preferred"] = w.preferred;
    x["other"] = w.other;
    x["text_truncated"] = w.text_truncated;
    wrong.push_back(std::move(x));
  }
  j["confidently_wrong"] = std::move(wrong);
  return j;
}

std::string fixed(double v, int digits = 3) { return reward::format_number(v, digits); }

std::string status_cell(const RewardCheck& c) {
  if (c.status != RewardCheckStatus::finding) return reward_check_status_name(c.status);
  return std::string("**finding (") + severity_name(c.severity) + ")**";
}

void check_row(std::string& md, const char* name, const RewardCheck& c) {
  md += std::string("| ") + name + " | " + status_cell(c) + " | " +
        md_text(c.status == RewardCheckStatus::not_measurable ? "not measurable: " + c.reason : c.message) + " |\n";
}


std::string calibration_markdown(const CalibrationCheck& c, size_t pairs, const std::string& format) {
  std::string md = "\n## Preference pairs\n\n" + std::to_string(pairs) + " pairs";
  if (!format.empty()) md += ", read as " + md_text(format);
  md += ".\n\n| check | status | result |\n|---|---|---|\n";
  check_row(md, "calibration", c);
  if (c.status == RewardCheckStatus::not_measurable) return md;
  md += "\n| measure | value |\n|---|---|\n";
  md += "| accuracy | " + fixed(c.accuracy) + " [" + fixed(c.accuracy_ci_low) + ", " + fixed(c.accuracy_ci_high) +
        "], binomial p = " + fixed(c.accuracy_p_value, 2) + " |\n";
  md += "| log-loss | " + fixed(c.log_loss) + " (at the fitted temperature " + fixed(c.log_loss_at_temperature) + ") |\n";
  md += "| Brier | " + fixed(c.brier) + " |\n";
  md += "| ECE | " + fixed(c.ece) + " [" + fixed(c.ece_ci_low) + ", " + fixed(c.ece_ci_high) + "]; equal-mass bins " +
        fixed(c.adaptive_ece) + "; at the fitted temperature " + fixed(c.ece_at_temperature) + " |\n";
  md += "| fitted temperature | " + (c.temperature_reason.empty() ? fixed(c.temperature) : md_text(c.temperature_reason)) + " |\n";
  md += "| pairs with confidence > 0.99 | " + fixed(100 * c.extreme_share) + "% |\n";
  md += "| left out | " + std::to_string(c.label_ties) + " tied labels, " + std::to_string(c.unscored) +
        " unscored; " + std::to_string(c.score_ties) + " equal scores counted as half right |\n";
  md += "\nReliability (confidence bins over [0.5, 1]):\n\n| confidence bin | pairs | mean confidence | accuracy |\n|---|---|---|---|\n";
  for (const auto& b : c.bins) {
    md += "| " + fixed(b.lo) + " to " + fixed(b.hi) + " | " + std::to_string(b.pairs) + " | " + fixed(b.confidence) +
          " | " + fixed(b.accuracy) + " |\n";
  }
  if (!c.confidently_wrong.empty()) {
    md += "\n### Most confidently wrong pairs\n";
    for (const auto& w : c.confidently_wrong) {
      md += "\n- " + md_code(w.source) + " row " + std::to_string(w.row) + ": scores " + fixed(w.first_score) + " vs " +
            fixed(w.second_score) + ", " + fixed(100 * w.confidence) + "% sure of the side that was not preferred" +
            (w.text_truncated ? " (texts truncated)" : "") + "\n";
      md += "\n  > prompt: " + md_code(w.prompt) + "\n  >\n  > preferred: " + md_code(w.preferred) +
            "\n  >\n  > scored higher: " + md_code(w.other) + "\n";
    }
  }
  return md;
}

}  // namespace

Json reward_health_json(const RewardHealthReport& r) {
  Json doc;
  doc["schema"] = REWARD_HEALTH_SCHEMA;
  doc["verdict"] = reward_health_verdict(r);
  doc["format"] = r.format;
  doc["rows"] = r.rows;
  doc["steps"] = r.steps;
  doc["first_step"] = r.first_step;
  doc["last_step"] = r.last_step;
  doc["has_gold"] = r.has_gold;
  doc["has_group"] = r.has_group;
  doc["has_step"] = r.has_step;
  doc["confidence"] = json_number(r.confidence);
  if (r.range_lo && r.range_hi) {
    Json range;
    range["lo"] = *r.range_lo;
    range["hi"] = *r.range_hi;
    doc["declared_range"] = range;
  } else {
    doc["declared_range"] = nullptr;
  }
  Json columns = Json::Array{};
  Json findings = Json::Array{};
  for (const auto& c : r.columns) {
    Json col;
    col["name"] = c.name;
    col["samples"] = c.samples;
    col["min"] = json_number(c.min);
    col["max"] = json_number(c.max);
    col["mean"] = json_number(c.mean);
    Json by_step = Json::Array{};
    for (const auto& d : c.by_step) {
      Json e;
      e["step"] = d.step;
      e["samples"] = d.samples;
      e["p10"] = json_number(d.p10);
      e["p50"] = json_number(d.p50);
      e["p90"] = json_number(d.p90);
      e["mean"] = json_number(d.mean);
      by_step.push_back(std::move(e));
    }
    col["by_step"] = std::move(by_step);
    Json by_length = Json::Array{};
    for (const auto& b : c.by_length) {
      Json e;
      e["words_lo"] = json_number(b.words_lo);
      e["words_hi"] = json_number(b.words_hi);
      e["samples"] = b.samples;
      e["words_mean"] = json_number(b.words_mean);
      e["reward_mean"] = json_number(b.reward_mean);
      by_length.push_back(std::move(e));
    }
    col["by_length"] = std::move(by_length);
    Json checks;
    checks["saturation"] = saturation_json(c.saturation);
    checks["zero_variance_groups"] = zero_variance_json(c.zero_variance_groups);
    checks["length_bias"] = length_bias_json(c.length_bias);
    checks["drift"] = drift_json(c.drift);
    checks["gold"] = gold_json(c.gold);
    checks["suspicious_samples"] = suspicious_json(c.suspicious_samples);
    checks["shortcut_features"] = shortcut_json(c.shortcut_features);
    col["checks"] = checks;
    columns.push_back(col);
    // Every finding once more in one flat list, the way a gate or a dashboard reads them.
    for (const auto& [name, check] : reward::checks_of(c)) {
      if (check->status != RewardCheckStatus::finding) continue;
      Json f;
      f["check"] = name;
      f["reward"] = c.name;
      f["severity"] = severity_name(check->severity);
      f["message"] = check->message;
      findings.push_back(std::move(f));
    }
  }
  doc["columns"] = columns;
  doc["pairs"] = r.pairs;
  doc["pair_format"] = r.pair_format.empty() ? Json(nullptr) : Json(r.pair_format);
  doc["calibration"] = calibration_json(r.calibration);
  if (r.calibration.status == RewardCheckStatus::finding) {
    Json f;
    f["check"] = "calibration";
    f["reward"] = nullptr;  // pairs carry their own scores, not a reward column
    f["severity"] = severity_name(r.calibration.severity);
    f["message"] = r.calibration.message;
    findings.push_back(std::move(f));
  }
  doc["findings"] = std::move(findings);
  return doc;
}

std::string reward_health_markdown(const RewardHealthReport& r) {
  std::string verdict = reward_health_verdict(r);
  std::string md = "# rldk reward health\n\nVerdict: **" + verdict + "**.";
  if (r.rows > 0 || r.pairs == 0) {
    md += " " + std::to_string(r.rows) + " samples over " + std::to_string(r.steps) + " step(s) (" +
          std::to_string(r.first_step) + " to " + std::to_string(r.last_step) + "), " +
          std::to_string(r.columns.size()) + " reward column(s)";
    if (!r.format.empty()) md += ", read as " + md_text(r.format);
    md += ".";
  }
  if (r.pairs > 0) md += " " + std::to_string(r.pairs) + " preference pairs.";
  md += "\n";
  if (r.range_lo && r.range_hi) md += "\nDeclared reward range: [" + fixed(*r.range_lo) + ", " + fixed(*r.range_hi) + "].\n";
  for (const auto& c : r.columns) {
    md += "\n## Reward " + md_code(c.name) + "\n\n";
    md += std::to_string(c.samples) + " samples; min " + fixed(c.min) + ", mean " + fixed(c.mean) + ", max " +
          fixed(c.max) + ".\n\n";
    md += "| check | status | result |\n|---|---|---|\n";
    check_row(md, "saturation", c.saturation);
    check_row(md, "zero_variance_groups", c.zero_variance_groups);
    check_row(md, "length_bias", c.length_bias);
    check_row(md, "drift", c.drift);
    check_row(md, "gold", c.gold);
    check_row(md, "suspicious_samples", c.suspicious_samples);
    check_row(md, "shortcut_features", c.shortcut_features);
    const LengthBiasCheck& l = c.length_bias;
    if (l.status != RewardCheckStatus::not_measurable) {
      md += "\nReward vs length (words): r [" + fixed(100 * r.confidence) + "% CI], two-sided p, pairs:\n\n";
      md += "| correlation | overall | within group |\n|---|---|---|\n";
      md += "| Pearson | " + reward::correlation_text(l.pearson) + " | " + reward::correlation_text(l.within_pearson) + " |\n";
      md += "| Spearman | " + reward::correlation_text(l.spearman) + " | " + reward::correlation_text(l.within_spearman) + " |\n";
    }
    const ShortcutFeaturesCheck& sc = c.shortcut_features;
    if (sc.status != RewardCheckStatus::not_measurable) {
      md += "\nSurface features vs reward within group (" + std::to_string(sc.samples) + " samples in " +
            std::to_string(sc.groups) + " groups; t test with " + std::to_string(sc.df) +
            " df; joint R^2 " + fixed(sc.joint_r2) + " over " + std::to_string(sc.joint_features) + " features):\n\n";
      md += "| feature | present in | within r | r^2 | p | joint coefficient | note |\n|---|---|---|---|---|---|---|\n";
      for (const auto& f : sc.features) {
        std::string note =
            f.flagged ? "**shortcut candidate**" : md_text(!f.judged ? "judged by length_bias" : f.reason);
        md += "| " + md_code(f.name) + " | " + fixed(100 * f.present_share) + "% | " + fixed(f.r) + " | " +
              fixed(f.r2) + " | " + fixed(f.p_value, 2) + " | " + fixed(f.joint_coefficient) + " | " + note +
              " |\n";
      }
      for (const auto& f : sc.features) {
        if (f.examples.empty()) continue;
        md += "\nHighest-reward samples with " + md_code(f.name) + ":\n";
        for (const auto& x : f.examples) {
          md += "\n- " + md_code(x.source) + " row " + std::to_string(x.row) + ", step " + std::to_string(x.step) +
                ": reward " + fixed(x.reward) + ", " + md_code(f.name) + " = " + fixed(x.value) + "\n";
          md += x.text_kept
                    ? "\n  > " + md_code(x.text) + (x.text_truncated ? " (truncated)" : "") + "\n"
                    : std::string("\n  > (text not kept: outside the bounded set of highest-reward examples)\n");
        }
      }
    }
    if (!c.suspicious_samples.samples.empty()) {
      md += "\n### Highest-reward suspicious samples\n";
      for (const auto& s : c.suspicious_samples.samples) {
        std::string why;
        for (const auto& reason : s.reasons) why += (why.empty() ? "" : ", ") + reason;
        md += "\n- " + md_code(s.source) + " row " + std::to_string(s.row) + ", step " + std::to_string(s.step) +
              ": reward " + fixed(s.reward) + ", " + std::to_string(s.length_words) + " words (z " +
              fixed(s.length_z) + "), repetition " + fixed(s.repetition) + " (" + md_text(why) + ")\n";
        if (s.text_kept) {
          if (!s.prompt.empty()) {
            md += "\n  > prompt: " + md_code(s.prompt) + (s.prompt_truncated ? " (truncated)" : "") + "\n  >";
          }
          md += "\n  > " + md_code(s.text) + (s.text_truncated ? " (truncated)" : "") + "\n";
        } else {
          md += "\n  > (text not kept: outside the bounded set of highest-reward examples)\n";
        }
      }
    }
  }
  if (r.pairs > 0) md += calibration_markdown(r.calibration, r.pairs, r.pair_format);
  return md;
}

}  // namespace rldk
