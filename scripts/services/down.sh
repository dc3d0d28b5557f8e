#!/usr/bin/env bash
# Stops what the project started (Kafka, the S3 server). The machine's Postgres and Redis are left alone.
source "$(dirname "$0")/lib.sh"
for name in kafka s3; do
  pidfile="$RUN_DIR/$name.pid"
  if is_running "$name"; then
    pid="$(cat "$pidfile")"
    log "stopping $name (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && { log "$name did not stop in 30 s; killing it"; kill -9 "$pid"; }
  fi
  rm -f "$pidfile"
done
