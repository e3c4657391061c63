#!/usr/bin/env bash
# The one test command (README, CI): set up, typecheck, check the architecture rules, run every
# test project (unit, integration against real Kafka/Redis, end-to-end with the built apps) in one
# vitest run, print one summary line and exit non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
started=$(date +%s)
bootstrap

step "typechecking (strict, every package)"
turbo run typecheck --output-logs=errors-only

step "checking architecture rules (apps never import apps; packages never import apps)"
node scripts/check-architecture.mjs
node scripts/render-config-docs.mjs --check

step "running tests (vitest: packages, apps, e2e)"
mkdir -p .wirestream
results=.wirestream/test-results.json
rm -f "$results"
set +e
vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@"
status=$?
set -e

node scripts/test-summary.mjs "$results" "$status" "$(( $(date +%s) - started ))"
