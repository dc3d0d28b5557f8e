#!/usr/bin/env bash
# npm run demo: everything from a fresh clone — dependencies, services, then the demo itself.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services/up.sh
exec node -r @swc-node/register scripts/demo/run-demo.ts
