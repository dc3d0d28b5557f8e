#!/usr/bin/env bash
# Starts everything Weir needs on this machine. Safe to run again: what runs is left running.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
bash scripts/ensure-deps.sh
bash scripts/services/redis.sh
bash scripts/services/postgres.sh
bash scripts/services/s3.sh
bash scripts/services/kafka.sh
bash scripts/services/status.sh
