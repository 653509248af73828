#!/usr/bin/env bash
# Installs stripe-mock (Stripe's own API mock, built from Stripe's OpenAPI spec) at the version
# infra/versions.env pins, with `go install` from the Go module proxy, into $TALLY_INFRA_HOME/stripe-mock/bin.
# A test tool only (test/stripe-mock.test.ts): production has no use for it, so docker-compose.yml has none.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../versions.env"
bin="$TALLY_INFRA_HOME/stripe-mock/bin"
stamp="$bin/.version"
if [ -x "$bin/stripe-mock" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$STRIPE_MOCK_VERSION" ]; then
  echo "stripe-mock $STRIPE_MOCK_VERSION"
  exit 0
fi
command -v go >/dev/null || { echo "infra: stripe-mock needs Go (go install); install Go first" >&2; exit 1; }
mkdir -p "$bin"
GOBIN="$bin" go install "github.com/stripe/stripe-mock@v$STRIPE_MOCK_VERSION" >&2
echo "$STRIPE_MOCK_VERSION" >"$stamp"
echo "stripe-mock $STRIPE_MOCK_VERSION"
