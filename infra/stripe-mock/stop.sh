#!/usr/bin/env bash
# Stops the stripe-mock that start.sh started (it keeps no data).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
dir="$TALLY_INFRA_HOME/stripe-mock"
mkdir -p "$dir"
exec 9>"$dir/.lock" && flock 9   # one start/stop at a time
stop_service stripe-mock "$dir/stripe-mock.pid" stripe-mock 10
