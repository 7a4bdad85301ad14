#!/usr/bin/env bash
# The reference suite's smoke test on a fresh machine: sets up (system packages, .venv, the rldk build), then
# trains the suite's TRL runs on a tiny model (healthy, and each with a known bug) and checks that every bug is
# caught by the rldk capability named for it and every healthy run stays quiet. About two minutes on 2 CPU cores
# after set-up. The table is printed; every card is in runs/reference/ with runs/reference/index.html linking them.
#   ./scripts/reference.sh            # --quick (the default)
#   ./scripts/reference.sh --full     # every task and bug, longer runs
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source .venv/bin/activate
echo
echo "\$ rldk reference run ${*:---quick}"
rldk reference run "${@:---quick}"
