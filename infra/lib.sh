# shellcheck shell=bash
# Shared helpers of the infra/ scripts (sourced, not run).
# TALLY_INFRA_HOME holds every service's binaries, data and logs; nothing is written to the repository.
TALLY_INFRA_HOME=${TALLY_INFRA_HOME:-$HOME/.cache/tally-infra}
mkdir -p "$TALLY_INFRA_HOME"

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.2 s until it succeeds or time runs out.
wait_until() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "infra: $what did not come up within ${seconds}s" >&2
      return 1
    fi
    sleep 0.2
  done
}

# alive PID: the process exists and has not exited. A just-forked child counts as alive before it has
# exec'd its program (its cmdline is still the shell's), and an exited, unreaped child (zombie) does not.
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }   # drop "pid (comm) ", comm may hold spaces
  [[ ${stat%% *} != Z ]]
}

# await_start NAME PID PIDFILE LOGFILE TIMEOUT STOP_SCRIPT CHECK...: after a service was launched in the
# background as PID, polls CHECK until it succeeds. Fails with the log's last lines if PID exits first
# (tested with alive, not a cmdline match: the child may not have exec'd its program yet), and on
# timeout releases the caller's start lock (fd 9) and runs STOP_SCRIPT.
await_start() {
  local name=$1 pid=$2 pidfile=$3 logfile=$4 timeout_s=$5 stop=$6
  shift 6
  local deadline=$((SECONDS + timeout_s))
  until "$@"; do
    if ! alive "$pid"; then
      echo "$name: exited during startup; last log lines:" >&2
      tail -n 30 "$logfile" >&2
      rm -f "$pidfile"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "$name: not answering after ${timeout_s}s; see $logfile" >&2
      exec 9>&-
      "$stop" >&2 || true
      return 1
    fi
    sleep 0.3
  done
  echo "$name: started (pid $pid, log $logfile)"
}

# stop_service NAME PIDFILE PATTERN TIMEOUT: sends SIGTERM to the pid in PIDFILE if its command line still
# matches PATTERN (pids get reused), waits up to TIMEOUT seconds for it to exit, then sends SIGKILL.
stop_service() {
  local name=$1 pidfile=$2 pattern=$3 timeout_s=$4 pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if [[ -z "$pid" ]] || ! grep -qs "$pattern" "/proc/$pid/cmdline"; then
    rm -f "$pidfile"
    echo "$name: not running"
    return 0
  fi
  kill -TERM "$pid"
  local deadline=$((SECONDS + timeout_s))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$name: no clean shutdown after ${timeout_s}s, sending SIGKILL" >&2
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$pidfile"
  echo "$name: stopped (pid $pid)"
}

# apt_install PACKAGE...: installs Debian packages that are missing (runs apt-get update once).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
