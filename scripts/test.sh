#!/usr/bin/env bash
# npm test: lint, typecheck, unit tests, then integration tests against the real services (started if needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh

step() { printf '\n== %s\n' "$*"; }
reports="$(mktemp -d)"

step "lint"
npx eslint . --max-warnings=0
step "typecheck"
npx tsc -p tsconfig.json --noEmit
step "openapi lint"
# Redocly's recommended rules on the checked-in document (redocly.yaml); telemetry off: CI has no network to spare.
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint --format=stylish
step "unit tests"
npx vitest run --project unit --reporter=default --reporter=json --outputFile.json="$reports/unit.json"
step "services"
bash scripts/services/up.sh
step "integration tests"
npx vitest run --project integration --reporter=default --reporter=json --outputFile.json="$reports/integration.json"

# One plain closing line, the same for every runner: what passed and what failed across both tiers.
node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0;
  for (const f of process.argv.slice(1)) {
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests;
  }
  console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$reports/unit.json" "$reports/integration.json"
rm -rf "$reports"
