#!/usr/bin/env bash
# Stops every service start.sh started.
set -uo pipefail
cd "$(dirname "$0")"
./redis/stop.sh
