#!/usr/bin/env bash
# Tally infra: stop the schema registry started by start.sh (SIGTERM, wait,
# SIGKILL after $SCHEMA_REGISTRY_STOP_TIMEOUT seconds). Keeps its data.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

sr_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/schema-registry"
pidfile="$sr_home/registry.pid"
timeout_s="${SCHEMA_REGISTRY_STOP_TIMEOUT:-20}"

mkdir -p "$sr_home"
exec 9>"$sr_home/.lock" && flock 9   # one start/stop at a time

stop_service schema-registry "$pidfile" registry-runner.jar "$timeout_s"
