#!/usr/bin/env bash
# The one test command (README, CI): set up, typecheck, lint (which holds the architecture rules), run every
# test project (unit, integration against real Kafka/Redis, end-to-end with the built apps) in one
# vitest run, print one summary line and exit non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
started=$(date +%s)
bootstrap

step "typechecking (strict, every package)"
turbo run typecheck --output-logs=errors-only

# ESLint + typescript-eslint (type-aware), Nx's module-boundary rule (apps never import apps, packages
# never import apps, no relative or deep imports across projects) and the gateway's layer rules:
# eslint.config.js. A violation fails here.
step "linting (type-aware; module boundaries and the gateway's layers)"
turbo run lint --output-logs=errors-only
node scripts/render-config-docs.mjs --check
depcruise --config .dependency-cruiser.cjs --ignore-known --output-type err apps packages
node scripts/check-gateway-layers.mjs
node scripts/render-project-graph.mjs --check
# The runbook's capacity tables must be what scripts/capacity.mjs computes from bench/results now.
node scripts/capacity.mjs --check

step "running tests (vitest: packages, apps, e2e)"
mkdir -p .wirestream
results=.wirestream/test-results.json
rm -f "$results"
set +e
vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@"
status=$?
set -e

node scripts/test-summary.mjs "$results" "$status" "$(( $(date +%s) - started ))"
