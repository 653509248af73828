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
