#!/usr/bin/env bash
# The Dockerfile's runtime stage, rehearsed without a Docker engine: in an empty directory, what the
# `manifests` stage copies (the manifests and the CLI's bin/), `npm ci --omit=dev` on the image's Node.js
# (infra/node), the compiled dist/ of every workspace and schemas/, and nothing else (no sources, no dev
# dependencies). Then the CLI creates a token, the image's command (the gateway) answers a pageview with 202,
# and the consumers' commands start. It finds what only the image would show: a production module importing
# a dev dependency (tsx, esbuild, vitest), a workspace the image does not link, a file read at run time
# that is not there.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
. infra/versions.env
node_bin=$(bash infra/node/install.sh "$NODE_IMAGE_MAJOR" | tail -n 1)
export PATH="$node_bin:$PATH"
app=$(mktemp -d /tmp/tally-image-XXXXXX)
data=$(mktemp -d /tmp/tally-image-data-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$app" "$data"
}
trap cleanup EXIT

npm run build >/dev/null
# The manifests stage's COPY lines (sources, then the destination), as the Dockerfile lists them.
awk '/^FROM .* AS manifests/{on=1; next} /^FROM /{on=0} on && /^COPY /{$1=""; print}' Dockerfile |
  while read -r -a args; do
    to=${args[-1]}
    if [[ $to == */ ]]; then mkdir -p "$app/$to"; else mkdir -p "$app/$(dirname "$to")"; fi
    for from in "${args[@]:0:${#args[@]}-1}"; do cp -r "$from" "$app/$to"; done
  done
(cd "$app" && NODE_ENV=production npm ci --omit=dev --ignore-scripts=false --no-audit --no-fund --loglevel=error)
for dir in packages/* services/*; do
  mkdir -p "$app/$dir" && cp -r "$dir/dist" "$app/$dir/"
done
find "$app/packages" "$app/services" \( -name '*.d.ts' -o -name '.tsbuildinfo' \) -delete
cp -r schemas "$app/"
[ -z "$(find "$app/packages" "$app/services" -path '*/src/*' -print -quit)" ] || { echo "sources in the image" >&2; exit 1; }

cd "$app"
export NODE_ENV=production TALLY_DATA_DIR="$data" TALLY_ENV_FILE=/dev/null
token=$(npx --no-install tally tokens create --project image --kind public | tail -n 1)
# ready SERVICE PID FILE: waits until the process PID has written its readiness file (TALLY_READY_FILE);
# prints the file's JSON.
ready() {
  local name=$1 pid=$2 file=$3
  for _ in $(seq 300); do
    if [ -s "$file" ]; then cat "$file"; return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "image rehearsal: $name did not become ready:" >&2
  cat "$data/$name.log" >&2
  return 1
}
# stopped NAME PID: SIGTERM, and the process exits 0.
stopped() {
  kill -TERM "$2"
  wait "$2" || { echo "image rehearsal: $1 did not exit cleanly:" >&2; cat "$data/$1.log" >&2; return 1; }
}

# The image's command, from the Dockerfile's CMD.
mapfile -t command < <(node -e "console.log(JSON.parse(process.argv[1]).join('\n'))" \
  "$(sed -n 's/^CMD //p' "$repo/Dockerfile")")
PORT=0 ADMIN_PORT=0 HOST=127.0.0.1 TALLY_READY_FILE="$data/gateway.ready" "${command[@]}" >"$data/gateway.log" 2>&1 &
pid=$!
pids+=("$pid")
url=$(ready gateway "$pid" "$data/gateway.ready" | node -e "console.log(JSON.parse(require('fs').readFileSync(0, 'utf8')).endpoints.url)")
status=$(curl -s -o /dev/null -w '%{http_code}' "$url/api/ingest" -H 'content-type: application/json' \
  -H "x-api-token: $token" -d '{"type":"pageview","data":{"session_id":"s_image"}}')
[ "$status" = 202 ] || { echo "image rehearsal: the gateway answered $status" >&2; exit 1; }
stopped gateway "$pid"
pids=()

# The consumers' commands (docker-compose.yml), on the embedded log and chDB: they start and stop cleanly.
for consumer in analytics-consumer revenue-consumer; do
  ADMIN_PORT=0 TALLY_DATA_DIR="$data/$consumer" TALLY_READY_FILE="$data/$consumer.ready" \
    node "services/$consumer/dist/main.js" >"$data/$consumer.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  ready "$consumer" "$pid" "$data/$consumer.ready" >/dev/null
  stopped "$consumer" "$pid"
  pids=()
done
# What Tally created in the data directory is its owner's alone: files 0600, directories 0700 (the
# rehearsal's own *.log files are the shell's).
loose=$(find "$data" -mindepth 1 ! -name '*.log' ! -type l -perm /077 -print)
[ -z "$loose" ] || { echo "image rehearsal: readable by others in the data directory: $loose" >&2; exit 1; }
echo "image rehearsal: Node $(node --version), production dependencies only: the CLI, the gateway (202) and both consumers ran, their files private"
