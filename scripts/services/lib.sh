# Shared settings for the service scripts. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WEIR_HOME="${WEIR_HOME:-.weir}"
case "$WEIR_HOME" in /*) ;; *) WEIR_HOME="$ROOT/$WEIR_HOME" ;; esac
LOG_DIR="$WEIR_HOME/logs"
RUN_DIR="$WEIR_HOME/run"
# Downloaded artifacts live outside the work tree so a fresh clone on the same machine reuses them.
CACHE_DIR="${WEIR_CACHE_DIR:-$HOME/.cache/weir}"
KAFKA_VERSION="${WEIR_KAFKA_VERSION:-3.9.1}"
KAFKA_PORT="${WEIR_KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${WEIR_KAFKA_CONTROLLER_PORT:-9093}"
# The listener job hosts reach, where each authenticates as its tenant (SASL/SCRAM) and ACLs apply.
KAFKA_TENANT_PORT="${WEIR_KAFKA_TENANT_PORT:-9094}"
S3_PORT="${WEIR_S3_PORT:-4568}"
S3_BUCKET="${WEIR_S3_BUCKET:-weir}"
mkdir -p "$LOG_DIR" "$RUN_DIR" "$CACHE_DIR"

log() { printf '[services] %s\n' "$*" >&2; }

# is_running NAME: true when the pid file names a live process.
is_running() {
  local pidfile="$RUN_DIR/$1.pid"
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls until COMMAND succeeds.
wait_for() {
  local deadline=$((SECONDS + $1)) what="$2"; shift 2
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then log "gave up waiting for $what"; return 1; fi
    sleep 0.5
  done
}
