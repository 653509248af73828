#!/usr/bin/env bash
# Tally infra: start Apicurio Registry (Confluent schema-registry API under
# /apis/ccompat/v7) in the background on 127.0.0.1, storing schemas in an H2
# file database under $TALLY_INFRA_HOME/schema-registry/data, so they survive
# stop.sh/start.sh. Needs no Kafka. Waits until GET <url>/subjects answers;
# no-op when already running. Last line: SCHEMA_REGISTRY_URL=<url>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$(dirname "$0")/../lib.sh"
sr_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/schema-registry"
port="${SCHEMA_REGISTRY_PORT:-18081}"
heap="${SCHEMA_REGISTRY_HEAP_OPTS:--Xms64m -Xmx256m}"
timeout_s="${SCHEMA_REGISTRY_START_TIMEOUT:-90}"
url="http://127.0.0.1:$port/apis/ccompat/v7"
pidfile="$sr_home/registry.pid"
logfile="$sr_home/registry.log"

mkdir -p "$sr_home"
exec 9>"$sr_home/.lock" && flock 9   # one start/stop at a time

running() { [[ -f "$pidfile" ]] && grep -qs registry-runner.jar "/proc/$(cat "$pidfile")/cmdline"; }
answers() { curl -sf -o /dev/null --max-time 5 "$url/subjects"; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

if running && answers; then
  echo "schema-registry: already running (pid $(cat "$pidfile"))"
  echo "SCHEMA_REGISTRY_URL=$url"
  exit 0
fi
running && { echo "schema-registry: pid $(cat "$pidfile") is up but not answering; see $logfile" >&2; exit 1; }
rm -f "$pidfile"
port_open && { echo "schema-registry: 127.0.0.1:$port is already in use by another process" >&2; exit 1; }

"$here/install.sh" >/dev/null
mkdir -p "$sr_home/data"
cd "$sr_home"   # the transaction manager writes its ObjectStore/ in the cwd

# setsid: detach from this shell's session so the registry outlives it.
# shellcheck disable=SC2086  # $heap holds several JVM flags
REGISTRY_DATASOURCE_URL="jdbc:h2:file:$sr_home/data/registry" \
  setsid java $heap -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
  -Dquarkus.log.category.\"io.sentry\".level=ERROR \
  -jar "$sr_home/app/registry-runner.jar" >"$logfile" 2>&1 </dev/null 9>&- &
pid=$!
echo "$pid" >"$pidfile"

await_start schema-registry "$pid" "$pidfile" "$logfile" "$timeout_s" "$here/stop.sh" answers || exit 1
echo "SCHEMA_REGISTRY_URL=$url"
