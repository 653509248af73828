#!/usr/bin/env bash
# Installs redis-server from Debian's packages (bookworm ships 7.0.15, the version infra/versions.env pins).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
apt_install redis-server redis-tools
# The Debian package may start a system service on 6379; Tally's own instance runs on its own port.
. "$(dirname "$0")/../versions.env"
installed=$(redis-server --version | sed -E 's/.*v=([0-9.]+).*/\1/')
[ "$installed" = "$REDIS_VERSION" ] || echo "infra: redis-server $installed installed; docker-compose.yml pins $REDIS_VERSION" >&2
echo "redis-server $installed"
