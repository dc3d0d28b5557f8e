#!/usr/bin/env bash
# The machine's own Postgres: start it if it is stopped, then create Weir's database, roles and schema.
source "$(dirname "$0")/lib.sh"

pg_ready() { pg_isready -h 127.0.0.1 -p 5432 -q; }
if ! pg_ready; then
  log "Postgres is down; starting the machine's cluster"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  wait_for 60 "Postgres" pg_ready
fi
cd "$ROOT"
node -r @swc-node/register scripts/db-setup.ts
