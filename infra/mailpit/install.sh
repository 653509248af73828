#!/usr/bin/env bash
# Installs Mailpit (an SMTP server that keeps what it receives and serves it over an HTTP API) with
# `go install` from the Go module proxy, at the version infra/versions.env pins, into
# $TALLY_INFRA_HOME/mailpit/bin. Idempotent. Tests send mail through it and read it back (test/mail.test.ts).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../versions.env"
home="$TALLY_INFRA_HOME/mailpit"
bin="$home/bin/mailpit"
stamp="$home/bin/.version"
if [[ -x "$bin" && "$(cat "$stamp" 2>/dev/null)" == "$MAILPIT_VERSION" ]]; then
  echo "mailpit: $MAILPIT_VERSION already installed in $home/bin"
  exit 0
fi
command -v go >/dev/null || { echo "mailpit: go not found (https://go.dev/dl/)" >&2; exit 1; }
mkdir -p "$home/bin"
GOBIN="$home/bin" GOFLAGS=-mod=mod go install "github.com/axllent/mailpit@$MAILPIT_VERSION"
echo "$MAILPIT_VERSION" >"$stamp"
echo "mailpit: installed $MAILPIT_VERSION into $home/bin"
