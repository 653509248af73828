#!/usr/bin/env bash
# Starts every service the integration tests need, on 127.0.0.1, idempotently.
# Prints the endpoints as KEY=value lines (REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL, MAILPIT_SMTP_URL,
# MAILPIT_URL).
set -euo pipefail
cd "$(dirname "$0")"
./redis/start.sh | tail -n 1
./mailpit/start.sh | tail -n 2
# The two JVMs start side by side: their start-ups overlap.
kafka_out=$(mktemp) registry_out=$(mktemp)
trap 'rm -f "$kafka_out" "$registry_out"' EXIT
./kafka/start.sh >"$kafka_out" & kafka=$!
./schema-registry/start.sh >"$registry_out" & registry=$!
wait "$kafka" || { cat "$kafka_out" >&2; exit 1; }
wait "$registry" || { cat "$registry_out" >&2; exit 1; }
tail -n 1 "$kafka_out"
tail -n 1 "$registry_out"
