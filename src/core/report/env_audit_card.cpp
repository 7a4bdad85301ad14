#include "report/env_audit_card.h"

namespace rldk {

void env_audit_table(HtmlPage& page, const EnvAudit& audit) {
  if (audit.checks.empty()) {
    page.paragraph("No checks ran.");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<ChartTone> tones;
  for (const auto& c : audit.checks) {
    rows.push_back({std::string(check_status_name(c.status)), c.id, c.summary, c.fix});
    tones.push_back(c.status == CheckStatus::fail   ? ChartTone::Critical
                    : c.status == CheckStatus::warn ? ChartTone::Warning
                    : c.status == CheckStatus::pass ? ChartTone::Good
                                                    : ChartTone::Neutral);
  }
  page.table({"status", "check", "summary", "fix"}, rows, tones);
}

}  // namespace rldk
