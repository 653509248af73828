#!/usr/bin/env bash
# Tally infra: stop the Kafka broker started by start.sh (SIGTERM, wait for a
# clean shutdown, SIGKILL after $KAFKA_STOP_TIMEOUT seconds). Keeps the data,
# so a later start.sh resumes with the same topics and offsets.
set -euo pipefail

kafka_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/kafka"
pidfile="$kafka_home/kafka.pid"
timeout_s="${KAFKA_STOP_TIMEOUT:-30}"

mkdir -p "$kafka_home"
exec 9>"$kafka_home/.lock" && flock 9   # one start/stop at a time

pid="$(cat "$pidfile" 2>/dev/null || true)"
# Only signal the pid if it still is our broker (pids get reused).
if [[ -z "$pid" ]] || ! grep -qs kafka.Kafka "/proc/$pid/cmdline"; then
  rm -f "$pidfile"
  echo "kafka: not running"
  exit 0
fi

kill -TERM "$pid"
deadline=$((SECONDS + timeout_s))
while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
if kill -0 "$pid" 2>/dev/null; then
  echo "kafka: no clean shutdown after ${timeout_s}s, sending SIGKILL" >&2
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
fi
rm -f "$pidfile"
echo "kafka: stopped (pid $pid)"
