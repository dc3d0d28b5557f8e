#!/usr/bin/env bash
# The machine's own Redis: start it if it is stopped (never stopped by services:down).
source "$(dirname "$0")/lib.sh"

redis_ready() { redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; }
if ! redis_ready; then
  log "Redis is down; starting it"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  wait_for 30 "Redis" redis_ready
fi
