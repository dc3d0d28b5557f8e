#!/usr/bin/env bash
# Installs npm dependencies when node_modules is missing or older than the lock file (a fresh clone, a pull).
set -euo pipefail
cd "$(dirname "$0")/.."
marker=node_modules/.package-lock.json
if [ ! -f "$marker" ] || [ package-lock.json -nt "$marker" ]; then
  echo "[deps] npm ci" >&2
  npm ci --no-audit --no-fund
fi
