#!/usr/bin/env bash
# Starts everything Weir needs on this machine. Safe to run again: what runs is left running.
# WEIR_EXTERNAL_SERVICES=1 skips starting Kafka and S3 (brought by docker-compose or a cloud account) and only
# prepares Postgres (database, roles, migrations).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
bash scripts/ensure-deps.sh
if [ "${WEIR_EXTERNAL_SERVICES:-0}" = "1" ]; then
  bash scripts/services/postgres.sh
  exit 0
fi
bash scripts/services/redis.sh
bash scripts/services/postgres.sh
bash scripts/services/s3.sh
bash scripts/services/kafka.sh
bash scripts/services/status.sh
