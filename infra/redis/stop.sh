#!/usr/bin/env bash
# Stops the Redis that start.sh started (its data stays in $TALLY_INFRA_HOME/redis).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
port=${REDIS_PORT:-16379}
redis-cli -h 127.0.0.1 -p "$port" shutdown >/dev/null 2>&1 || true
