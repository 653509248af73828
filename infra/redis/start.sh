#!/usr/bin/env bash
# Starts Redis on 127.0.0.1:${REDIS_PORT:-16379} with append-only persistence (as in docker-compose.yml),
# unless it is already running. Prints REDIS_URL=… on its last line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
port=${REDIS_PORT:-16379}
dir="$TALLY_INFRA_HOME/redis"
mkdir -p "$dir"
if ! redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
  command -v redis-server >/dev/null || "$(dirname "$0")/install.sh" >&2
  redis-server --bind 127.0.0.1 --port "$port" --protected-mode yes --daemonize yes \
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
    --appendonly yes --appendfsync everysec --save ""
  wait_until 20 "redis on port $port" sh -c "redis-cli -h 127.0.0.1 -p $port ping | grep -q PONG"
fi
echo "REDIS_URL=redis://127.0.0.1:$port"
