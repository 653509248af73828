#!/usr/bin/env bash
# Tally infra: download the Apache Kafka broker jars listed in pom.xml from
# Maven Central into $TALLY_INFRA_HOME/kafka/libs (default ~/.cache/tally-infra).
# Idempotent: does nothing when the jars for this pom.xml are already there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kafka_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/kafka"
libs="$kafka_home/libs"
stamp=".installed-$(sha256sum "$here/pom.xml" | cut -c1-16)"   # changes when pom.xml changes

if [[ -f "$libs/$stamp" ]]; then
  echo "kafka: jars already installed in $libs"
  exit 0
fi
command -v mvn >/dev/null || { echo "kafka: mvn not found (apt-get install -y maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "kafka: java 17+ not found" >&2; exit 1; }

mkdir -p "$kafka_home"
tmp="$(mktemp -d "$kafka_home/libs.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "kafka: downloading jars with Maven (log: $kafka_home/install.log)"
if ! mvn -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$tmp" >"$kafka_home/install.log" 2>&1; then
  tail -n 40 "$kafka_home/install.log" >&2
  exit 1
fi
touch "$tmp/$stamp"
rm -rf "$libs"
mv "$tmp" "$libs"
jars=("$libs"/*.jar)
echo "kafka: installed ${#jars[@]} jars into $libs"
