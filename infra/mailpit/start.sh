#!/usr/bin/env bash
# Starts Mailpit in the background on 127.0.0.1: SMTP on ${MAILPIT_SMTP_PORT:-11025}, its web UI and HTTP API
# on ${MAILPIT_HTTP_PORT:-18025}, messages kept in $TALLY_INFRA_HOME/mailpit/mailpit.db. No-op when it already
# answers. SMTP accepts any credentials over plain text (a test server on localhost only).
# Last two lines: MAILPIT_SMTP_URL=smtp://127.0.0.1:<smtp port> and MAILPIT_URL=http://127.0.0.1:<http port>.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
home="$TALLY_INFRA_HOME/mailpit"
smtp_port=${MAILPIT_SMTP_PORT:-11025}
http_port=${MAILPIT_HTTP_PORT:-18025}
url="http://127.0.0.1:$http_port"
pidfile="$home/mailpit.pid"
logfile="$home/mailpit.log"
mkdir -p "$home"
exec 9>"$home/.lock" && flock 9   # one start/stop at a time

running() { [[ -f "$pidfile" ]] && grep -qs mailpit "/proc/$(cat "$pidfile")/cmdline"; }
answers() { curl -sf -o /dev/null --max-time 5 "$url/api/v1/info"; }

if running && answers; then
  echo "mailpit: already running (pid $(cat "$pidfile"))"
else
  running && { echo "mailpit: pid $(cat "$pidfile") is up but not answering; see $logfile" >&2; exit 1; }
  rm -f "$pidfile"
  "$here/install.sh" >&2
  # setsid: detach from this shell's session so Mailpit outlives it.
  setsid "$home/bin/mailpit" --listen "127.0.0.1:$http_port" --smtp "127.0.0.1:$smtp_port" \
    --database "$home/mailpit.db" --max 5000 \
    --smtp-auth-accept-any --smtp-auth-allow-insecure \
    >"$logfile" 2>&1 </dev/null 9>&- &
  pid=$!
  echo "$pid" >"$pidfile"
  await_start mailpit "$pid" "$pidfile" "$logfile" 30 "$here/stop.sh" answers || exit 1
fi
echo "MAILPIT_SMTP_URL=smtp://127.0.0.1:$smtp_port"
echo "MAILPIT_URL=$url"
