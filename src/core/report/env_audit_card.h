// The environment audit as a card section (doctor and determinism cards): one table row per check, coloured by its
// status, with the fix beside it. The Markdown rendering lives with the audit (env_audit_markdown).
#pragma once

#include "rldk/env_audit.h"
#include "rldk/html_page.h"

namespace rldk {

void env_audit_table(HtmlPage& page, const EnvAudit& audit);

}  // namespace rldk
