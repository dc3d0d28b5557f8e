#!/usr/bin/env bash
# One line per service: up or down, and where.
source "$(dirname "$0")/lib.sh"
line() { printf '%-9s %-5s %s\n' "$1" "$2" "$3"; }
pg_isready -h 127.0.0.1 -p 5432 -q && line postgres up 127.0.0.1:5432 || line postgres down 127.0.0.1:5432
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && line redis up 127.0.0.1:6379 || line redis down 127.0.0.1:6379
is_running kafka && port_open "$KAFKA_PORT" && line kafka up "127.0.0.1:$KAFKA_PORT (logs $LOG_DIR/kafka.log)" \
  || line kafka down "127.0.0.1:$KAFKA_PORT"
is_running s3 && port_open "$S3_PORT" && line s3 up "127.0.0.1:$S3_PORT (logs $LOG_DIR/s3.log)" \
  || line s3 down "127.0.0.1:$S3_PORT"
