#!/usr/bin/env bash
# Starts every service the integration tests need, on 127.0.0.1, idempotently.
# Prints the endpoints as KEY=value lines: `eval "$(infra/start.sh | grep =)"` exports them.
set -euo pipefail
cd "$(dirname "$0")"
./redis/start.sh | tail -n 1
