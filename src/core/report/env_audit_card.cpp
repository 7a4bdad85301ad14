#include "report/env_audit_card.h"

namespace rldk {

void env_audit_table(HtmlPage& page, const EnvAudit& audit) {
  if (audit.checks.empty()) {
    page.paragraph("No checks ran.");
    return;
  }
  bool any_fix = false;  // no empty "fix" column when every check passed or was skipped
  for (const auto& c : audit.checks) any_fix = any_fix || !c.fix.empty();
  std::vector<std::vector<std::string>> rows;
  std::vector<ChartTone> tones;
  for (const auto& c : audit.checks) {
    rows.push_back({std::string(check_status_name(c.status)), c.id, c.summary});
    if (any_fix) rows.back().push_back(c.fix);
    tones.push_back(c.status == CheckStatus::fail   ? ChartTone::Critical
                    : c.status == CheckStatus::warn ? ChartTone::Warning
                    : c.status == CheckStatus::pass ? ChartTone::Good
                                                    : ChartTone::Neutral);
  }
  std::vector<std::string> header{"status", "check", "summary"};
  if (any_fix) header.emplace_back("fix");
  page.table(header, rows, tones);
}

}  // namespace rldk
