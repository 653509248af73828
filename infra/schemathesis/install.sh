#!/usr/bin/env bash
# Installs schemathesis (PyPI) into its own virtualenv under TALLY_INFRA_HOME, for
# test/openapi-schemathesis.test.ts, which runs its CLI against a real gateway process with
# schemas/openapi.yaml. Idempotent: does nothing when the pinned version is already there.
# Prints the path of the `st` executable on its last line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
SCHEMATHESIS_VERSION=4.32.5
venv="$TALLY_INFRA_HOME/schemathesis"
st="$venv/bin/st"

# (pip's output is captured first: `grep -q` closing the pipe early would fail the pipeline under pipefail)
installed() {
  [ -x "$st" ] || return 1
  local shown
  shown=$("$venv/bin/python" -m pip show schemathesis 2>/dev/null) || return 1
  grep -qx "Version: $SCHEMATHESIS_VERSION" <<<"$shown"
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
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  installed || { echo "infra: schemathesis $SCHEMATHESIS_VERSION did not install into $venv" >&2; exit 1; }
fi
echo "$st"
