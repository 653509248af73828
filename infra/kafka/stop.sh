#!/usr/bin/env bash
# Tally infra: stop the Kafka broker started by start.sh (SIGTERM, wait for a
# clean shutdown, SIGKILL after $KAFKA_STOP_TIMEOUT seconds). Keeps the data,
# so a later start.sh resumes with the same topics and offsets.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

kafka_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/kafka"
pidfile="$kafka_home/kafka.pid"
timeout_s="${KAFKA_STOP_TIMEOUT:-30}"

mkdir -p "$kafka_home"
exec 9>"$kafka_home/.lock" && flock 9   # one start/stop at a time

stop_service kafka "$pidfile" kafka.Kafka "$timeout_s"
