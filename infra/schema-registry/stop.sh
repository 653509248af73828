#!/usr/bin/env bash
# Tally infra: stop the schema registry started by start.sh (SIGTERM, wait,
# SIGKILL after $SCHEMA_REGISTRY_STOP_TIMEOUT seconds). Keeps its data.
set -euo pipefail

sr_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/schema-registry"
pidfile="$sr_home/registry.pid"
timeout_s="${SCHEMA_REGISTRY_STOP_TIMEOUT:-20}"

mkdir -p "$sr_home"
exec 9>"$sr_home/.lock" && flock 9   # one start/stop at a time

pid="$(cat "$pidfile" 2>/dev/null || true)"
# Only signal the pid if it still is our registry (pids get reused).
if [[ -z "$pid" ]] || ! grep -qs registry-runner.jar "/proc/$pid/cmdline"; then
  rm -f "$pidfile"
  echo "schema-registry: not running"
  exit 0
fi

kill -TERM "$pid"
deadline=$((SECONDS + timeout_s))
while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
if kill -0 "$pid" 2>/dev/null; then
  echo "schema-registry: no clean shutdown after ${timeout_s}s, sending SIGKILL" >&2
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
fi
rm -f "$pidfile"
echo "schema-registry: stopped (pid $pid)"
