#!/usr/bin/env bash
# Installs headless Chromium from Debian's packages for the SDK browser tests (playwright-core drives it;
# a test tool's own browser download is not possible here). Does nothing when /usr/bin/chromium exists.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi
/usr/bin/chromium --version 2>/dev/null | grep -v '^\s*$' | tail -1
