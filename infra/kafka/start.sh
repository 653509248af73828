#!/usr/bin/env bash
# Tally infra: start a single-node Apache Kafka 4.x broker in KRaft mode
# (combined broker+controller) in the background, bound to 127.0.0.1 only.
# Formats the storage on first start (fixed cluster id, so data survives
# stop.sh/start.sh), waits until the broker answers API requests, and is a
# no-op when it is already running. Last line: KAFKA_BROKERS=host:port
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$(dirname "$0")/../lib.sh"
kafka_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/kafka"
port="${KAFKA_PORT:-19092}"
controller_port="${KAFKA_CONTROLLER_PORT:-19093}"
heap="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
timeout_s="${KAFKA_START_TIMEOUT:-120}"
cluster_id="VGFsbHlEZXZDbHVzdGVyMQ"   # base64url("TallyDevCluster1")
pidfile="$kafka_home/kafka.pid"
logfile="$kafka_home/kafka.log"
conf="$kafka_home/server.properties"
cp="$kafka_home/libs/*"

mkdir -p "$kafka_home"
exec 9>"$kafka_home/.lock" && flock 9   # one start/stop at a time

running() { [[ -f "$pidfile" ]] && grep -qs kafka.Kafka "/proc/$(cat "$pidfile")/cmdline"; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
broker_answers() {
  timeout 30 java -Xmx64m -cp "$cp" org.apache.kafka.tools.BrokerApiVersionsCommand \
    --bootstrap-server "127.0.0.1:$port" >/dev/null 2>&1
}
done_msg() { echo "KAFKA_BROKERS=127.0.0.1:$port"; }

if running && broker_answers; then
  echo "kafka: already running (pid $(cat "$pidfile"))"
  done_msg
  exit 0
fi
running && { echo "kafka: pid $(cat "$pidfile") is up but not answering; see $logfile" >&2; exit 1; }
rm -f "$pidfile"
for p in "$port" "$controller_port"; do
  port_open "$p" && { echo "kafka: 127.0.0.1:$p is already in use by another process" >&2; exit 1; }
done

"$here/install.sh" >/dev/null
mkdir -p "$kafka_home/data"

cat >"$conf" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$kafka_home/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS

cat >"$kafka_home/log4j2.properties" <<'PROPS'
appender.out.type=Console
appender.out.name=out
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=info
rootLogger.appenderRef.out.ref=out
logger.state.name=state.change.logger
logger.state.level=warn
PROPS

if [[ ! -f "$kafka_home/data/meta.properties" ]]; then
  java -cp "$cp" kafka.tools.StorageTool format --ignore-formatted \
    --cluster-id "$cluster_id" --config "$conf" >/dev/null
fi

# setsid: detach from this shell's session so the broker outlives it.
# shellcheck disable=SC2086  # $heap holds several JVM flags
setsid java $heap -XX:+UseG1GC -Djava.awt.headless=true \
  -Dlog4j2.configurationFile="$kafka_home/log4j2.properties" \
  -cp "$cp" kafka.Kafka "$conf" >"$logfile" 2>&1 </dev/null 9>&- &
pid=$!
echo "$pid" >"$pidfile"

ready() { port_open "$port" && broker_answers; }
await_start kafka "$pid" "$pidfile" "$logfile" "$timeout_s" "$here/stop.sh" ready || exit 1
done_msg
