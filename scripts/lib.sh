# Shared helpers for the local-infrastructure scripts. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INFRA_DIR="${TRAWL_INFRA_DIR:-$ROOT/.infra}"
mkdir -p "$INFRA_DIR"

log() { printf '[infra] %s\n' "$*" >&2; }

# pid_alive FILE: true when FILE names a live process.
pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# wait_port HOST PORT SECONDS
wait_port() {
  local host=$1 port=$2 secs=$3 i
  for ((i = 0; i < secs * 5; i++)); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  return 1
}

port_busy() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# adopt_or_refuse NAME WHERE VAR IDENTITY_FN: a port that is already in use is used as is only when IDENTITY_FN (an API
# call only NAME answers that way) succeeds; anything else on it (a web server, another service) stops the start
# with a message naming the port's variable. Returns 0 to adopt, 1 to refuse.
adopt_or_refuse() {
  local name=$1 where=$2 var=$3 identity=$4
  if "$identity"; then log "$name: $where is in use by a running $name (not started by these scripts); using it as is"; return 0; fi
  log "$name: $where is in use by a process that is not $name (it failed $name's identity check); set $var to a free port"
  return 1
}

# need_free NAME HOST PORT VAR: a second port the server would bind must be free.
need_free() {
  if port_busy "$2" "$3"; then log "$1: $2:$3 is in use by another process; set $4 to a free port"; return 1; fi
}

# need_kcat: kcat (Debian package) for Kafka's identity check.
need_kcat() { command -v kcat >/dev/null || apt_install kcat; }

# stop_pid FILE NAME: stop the process we started (and only it), waiting for it to exit.
stop_pid() {
  local file=$1 name=$2 pid i
  if ! pid_alive "$file"; then rm -f "$file"; log "$name: not running (started by us)"; return 0; fi
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then log "$name: did not stop in 30 s, killing"; kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$file"
  log "$name: stopped"
}

# need_java_maven: Java 17 and Maven from Debian when missing (Kafka's jars and the registry come through Maven).
need_java_maven() {
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  command -v mvn >/dev/null || apt_install maven
}

# apt_install PACKAGE...: apt-get install (root), one at a time. The services install in parallel (infra.sh), and
# apt fails at once on a lock another apt-get holds (`update` on the lists lock, `install` on the archives lock; only
# the dpkg lock honours DPkg::Lock::Timeout): a first `npm run infra -- up` on a bare machine then failed with
# "Could not get lock /var/lib/apt/lists/lock". So the installs of these scripts queue on one lock file (and only the
# first runs `apt-get update`), and a lock held by another process (an apt-get, unattended-upgrades) is waited for.
APT_QUEUE_LOCK=/run/lock/trawl-apt.lock
# ensure_venv DIR: a Python virtualenv at DIR made by the first python3 on PATH, made again (--clear) when it is
# missing or broken (e.g. made by another interpreter whose modules no longer load: pip then cannot reach PyPI).
ensure_venv() {
  local venv=$1
  if [[ -x "$venv/bin/pip" ]] && "$venv/bin/python" -c 'import ssl, ensurepip' 2>/dev/null; then return 0; fi
  python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
  python3 -m venv --clear "$venv"
}

apt_install() (
  if [[ $(id -u) -ne 0 ]]; then log "need root to apt-get install $*"; exit 1; fi
  mkdir -p "$(dirname "$APT_QUEUE_LOCK")"
  exec 9>>"$APT_QUEUE_LOCK"
  flock -n 9 || { log "apt: waiting for another install of these scripts"; flock 9; }
  if [[ ! -f "$INFRA_DIR/.apt-updated" ]]; then log "apt-get update"; apt_get update -qq || exit; touch "$INFRA_DIR/.apt-updated"; fi
  apt_get install -y -q "$@"
)

# apt_get ARGS...: apt-get (standard output discarded), waiting up to TRAWL_APT_WAIT_S (600) while another process
# holds one of apt's locks instead of failing on it (apt changes nothing before it has its locks).
apt_get() {
  local err rc waiting=0 deadline=$((SECONDS + ${TRAWL_APT_WAIT_S:-600}))
  while :; do
    rc=0
    err=$(LC_ALL=C DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=60 "$@" 2>&1 >/dev/null) || rc=$?
    if ((rc != 0)) && [[ $err == *"Could not get lock"* ]] && ((SECONDS < deadline)); then
      ((waiting)) || log "apt-get $1: waiting for a lock held by another process (${err%%$'\n'*})"
      waiting=1; sleep 1; continue
    fi
    [[ -z $err ]] || printf '%s\n' "$err" >&2
    return "$rc"
  done
}

# wait_ready NAME PIDFILE READY_FN LOG...: waits up to TRAWL_INFRA_READY_S (120) s for READY_FN to succeed while the
# process lives; shows the logs when it dies.
wait_ready() {
  local name=$1 pidfile=$2 ready=$3 i
  shift 3
  for ((i = 0; i < ${TRAWL_INFRA_READY_S:-120} * 5; i++)); do
    if ! pid_alive "$pidfile"; then tail -n 30 "$@" >&2 || true; log "$name: exited during start"; return 1; fi
    if "$ready"; then log "$name: ready"; return 0; fi
    sleep 0.2
  done
  log "$name: not ready after ${TRAWL_INFRA_READY_S:-120} s (TRAWL_INFRA_READY_S)"; return 1
}

# print_status NAME PIDFILE WHERE
print_status() {
  if pid_alive "$2"; then echo "$1: running (pid $(cat "$2")) on $3"; else echo "$1: stopped (would run on $3)"; fi
}

# print_role NAME ROLE PIDFILE WHERE: one line of `status`: the server, its role, whether it runs, its address.
print_role() {
  if pid_alive "$3"; then echo "$1 [$2]: running (pid $(cat "$3")) on $4"; else echo "$1 [$2]: stopped (would run on $4)"; fi
}

# alive_count PIDFILE...: how many of these files name a live process.
alive_count() {
  local n=0 f
  for f in "$@"; do if pid_alive "$f"; then n=$((n + 1)); fi; done
  echo "$n"
}

# xml_value FILE TAG: the text of the first <TAG>…</TAG> of FILE (a port of a configuration these scripts wrote).
xml_value() { sed -n "s:.*<$2>\([^<]*\)</$2>.*:\1:p" "$1" 2>/dev/null | head -1; }
