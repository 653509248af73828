#!/usr/bin/env bash
# Stops every service start.sh started (their data stays in $TALLY_INFRA_HOME).
set -uo pipefail
cd "$(dirname "$0")"
./schema-registry/stop.sh
./kafka/stop.sh
./redis/stop.sh
./mailpit/stop.sh
