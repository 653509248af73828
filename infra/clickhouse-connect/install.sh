#!/usr/bin/env bash
# Installs clickhouse-connect (PyPI; the Python client Superset and most notebooks use) into its own
# virtualenv under TALLY_INFRA_HOME, for test/warehouse-clients.test.ts, which runs
# test/support/clickhouse_connect_check.py with it against the warehouse's ClickHouse HTTP interface.
# clickhouse-cityhash (CityHash128 v1.0.2, as ClickHouse checksums its compressed blocks) comes along for
# the test of the `compress`/`decompress` parameters. Idempotent: does nothing when the pinned versions are
# there. Prints the path of the virtualenv's python on its last line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
CLICKHOUSE_CONNECT_VERSION=1.12.0
CLICKHOUSE_CITYHASH_VERSION=1.0.2.6
venv="$TALLY_INFRA_HOME/clickhouse-connect"
python_bin="$venv/bin/python"

# (pip's output is captured first: `grep -q` closing the pipe early would fail the pipeline under pipefail)
installed() {
  [ -x "$python_bin" ] || return 1
  local shown
  shown=$("$python_bin" -m pip show clickhouse-connect clickhouse-cityhash 2>/dev/null) || return 1
  grep -qx "Version: $CLICKHOUSE_CONNECT_VERSION" <<<"$shown" &&
    grep -qx "Version: $CLICKHOUSE_CITYHASH_VERSION" <<<"$shown"
}

if ! installed; then
  python=$(command -v python3 || true)
  if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    # No usable python3 on the PATH: Debian's, with its venv module.
    apt_install python3 python3-venv
    python=/usr/bin/python3
  fi
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$python_bin" -m pip install --quiet --disable-pip-version-check \
    "clickhouse-connect==$CLICKHOUSE_CONNECT_VERSION" "clickhouse-cityhash==$CLICKHOUSE_CITYHASH_VERSION"
  installed || { echo "infra: clickhouse-connect $CLICKHOUSE_CONNECT_VERSION did not install into $venv" >&2; exit 1; }
fi
echo "$python_bin"
