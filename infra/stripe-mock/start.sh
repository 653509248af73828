#!/usr/bin/env bash
# Starts stripe-mock on 127.0.0.1:${STRIPE_MOCK_PORT:-12111} (HTTP), unless it is already running.
# Prints STRIPE_MOCK_URL=… on its last line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
port=${STRIPE_MOCK_PORT:-12111}
dir="$TALLY_INFRA_HOME/stripe-mock"
pidfile="$dir/stripe-mock.pid"
logfile="$dir/stripe-mock.log"
mkdir -p "$dir"
exec 9>"$dir/.lock" && flock 9   # one start/stop at a time
answering() { curl -fsS -o /dev/null -H 'Authorization: Bearer sk_test_123' "http://127.0.0.1:$port/v1/customers" 2>/dev/null; }
if ! answering 2>/dev/null; then
  "$(dirname "$0")/install.sh" >&2
  nohup "$dir/bin/stripe-mock" -http-addr "127.0.0.1:$port" >"$logfile" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$pidfile"
  await_start stripe-mock "$pid" "$pidfile" "$logfile" 30 "$(dirname "$0")/stop.sh" answering >&2
fi
echo "STRIPE_MOCK_URL=http://127.0.0.1:$port"
