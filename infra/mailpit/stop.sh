#!/usr/bin/env bash
# Stops the Mailpit start.sh started (its messages stay in $TALLY_INFRA_HOME/mailpit).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
home="$TALLY_INFRA_HOME/mailpit"
mkdir -p "$home"
exec 9>"$home/.lock" && flock 9   # one start/stop at a time
stop_service mailpit "$home/mailpit.pid" mailpit 10
