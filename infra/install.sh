#!/usr/bin/env bash
# Installs every service the integration tests need, from Debian's packages and the registries.
set -euo pipefail
cd "$(dirname "$0")"
./redis/install.sh
./chromium/install.sh
