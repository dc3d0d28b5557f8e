#!/usr/bin/env bash
# npm run bench -- NAME [args]: runs bench/NAME.ts against the real services (started if needed).
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:-}"
if [ -z "$name" ] || [ ! -f "bench/$name.ts" ]; then
  echo "usage: npm run bench -- NAME   (one of: $(ls bench/*.ts 2>/dev/null | xargs -n1 basename | sed 's/\.ts$//' | grep -v '^_' | tr '\n' ' '))" >&2
  exit 2
fi
shift
bash scripts/services/up.sh >/dev/null
exec node --max-old-space-size=8192 -r @swc-node/register "bench/$name.ts" "$@"
