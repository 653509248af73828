#!/usr/bin/env bash
# Installs redis-server from Debian's packages (7.0.x on bookworm; docker-compose.yml pins the same version).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
apt_install redis-server redis-tools
# The Debian package may start a system service on 6379; Tally's own instance runs on its own port.
redis-server --version
