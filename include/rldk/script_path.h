// Replicas (check-determinism, replay) run each in a folder of their own, so a command copied from a shell,
// `python train.py ...`, would not find its script there. The script word is made absolute against the folder rldk
// was started in; nothing else in the command changes (outputs such as --output metrics.jsonl stay per replica).
#pragma once

#include <string>

namespace rldk {

// The first word that names an existing file ending in .py or .sh, relative to `launch_dir`, replaced by its
// absolute path (quoted for /bin/sh when it needs it). The command is returned unchanged when there is none.
std::string with_absolute_script(const std::string& command, const std::string& launch_dir);

}  // namespace rldk
