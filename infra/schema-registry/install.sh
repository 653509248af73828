#!/usr/bin/env bash
# Tally infra: build a runnable Apicurio Registry (Confluent-compatible schema
# registry) from Maven Central into $TALLY_INFRA_HOME/schema-registry/app
# (default ~/.cache/tally-infra). See pom.xml for the version and why.
# Idempotent: does nothing when the app for this pom.xml is already built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sr_home="${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}/schema-registry"
app="$sr_home/app"
stamp=".installed-$(sha256sum "$here/pom.xml" | cut -c1-16)"   # changes when pom.xml changes

if [[ -f "$app/$stamp" ]]; then
  echo "schema-registry: already installed in $app"
  exit 0
fi
command -v mvn >/dev/null || { echo "schema-registry: mvn not found (apt-get install -y maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "schema-registry: java 17+ not found" >&2; exit 1; }

# Build outside the repo, in a scratch copy of the pom.
mkdir -p "$sr_home"
build="$(mktemp -d "$sr_home/build.XXXXXX")"
trap 'rm -rf "$build"' EXIT
cp "$here/pom.xml" "$build/pom.xml"
# Apicurio's poms also list jitpack/confluent/eclipse repositories, which are
# unreachable here: send every repository to Maven Central.
cat >"$build/settings.xml" <<'XML'
<settings>
  <mirrors>
    <mirror><id>central-only</id><mirrorOf>*</mirrorOf><url>https://repo.maven.apache.org/maven2</url></mirror>
  </mirrors>
</settings>
XML
echo "schema-registry: building with Maven (log: $sr_home/install.log)"
if ! mvn -B -Dstyle.color=never -s "$build/settings.xml" -f "$build/pom.xml" package \
  >"$sr_home/install.log" 2>&1; then
  tail -n 40 "$sr_home/install.log" >&2
  exit 1
fi
mkdir "$build/app"
mv "$build"/target/*-runner.jar "$build/app/registry-runner.jar"
mv "$build/target/lib" "$build/app/lib"
touch "$build/app/$stamp"
rm -rf "$app"
mv "$build/app" "$app"
echo "schema-registry: installed Apicurio Registry into $app"
