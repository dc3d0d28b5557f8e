#!/usr/bin/env bash
# An S3-compatible server (s3rver) on loopback. Weir speaks only the AWS SDK to it.
source "$(dirname "$0")/lib.sh"

s3_ready() { curl -sf -o /dev/null "http://127.0.0.1:$S3_PORT/$S3_BUCKET" ; }
if is_running s3; then wait_for 30 "S3" s3_ready; exit 0; fi
if port_open "$S3_PORT"; then
  log "port $S3_PORT is taken by a process this project did not start; set WEIR_S3_PORT"
  exit 1
fi
mkdir -p "$WEIR_HOME/s3"
log "starting the S3 server on 127.0.0.1:$S3_PORT"
cd "$ROOT"
nohup node --openssl-legacy-provider scripts/services/s3-server.cjs "$WEIR_HOME/s3" "$S3_PORT" "$S3_BUCKET" >> "$LOG_DIR/s3.log" 2>&1 < /dev/null &
echo $! > "$RUN_DIR/s3.pid"
wait_for 30 "S3" s3_ready || { tail -20 "$LOG_DIR/s3.log" >&2; exit 1; }
log "S3 is up"
