#!/usr/bin/env bash
# The one test command (README, CI): set up, then typecheck and lint (which hold the architecture rules)
# beside one vitest run of every test project (unit, integration against real Kafka/Redis, end-to-end
# with the built apps); print one summary line and exit non-zero on any failure.
# For day-to-day work on one package: scripts/test-fast.sh (pnpm test:fast).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
started=$(date +%s)
bootstrap

# Typecheck (strict, every package) and lint run beside the tests, which mostly wait on Kafka: on two
# cores this hides their minutes instead of adding them before the first test. One turbo task at a
# time keeps a core for the tests; turbo's cache makes a second run of an unchanged tree instant.
# ESLint + typescript-eslint (type-aware), Nx's module-boundary rule (apps never import apps, packages
# never import apps, no relative or deep imports across projects) and the gateway's layer rules:
# eslint.config.js. A violation fails the run; its output is in .wirestream/checks.log.
mkdir -p .wirestream
checks_log=.wirestream/checks.log
step "typechecking and linting in the background (log: $checks_log)"
(
  turbo run typecheck lint --concurrency=1 --output-logs=errors-only \
    && node scripts/render-config-docs.mjs --check \
    && depcruise --config .dependency-cruiser.cjs --output-type err apps packages \
    && node scripts/check-gateway-layers.mjs \
    && node scripts/render-project-graph.mjs --check \
    && node scripts/check-links.mjs \
    && node scripts/capacity.mjs --check # the runbook's capacity tables are what bench/results gives now
) >"$checks_log" 2>&1 &
checks_pid=$!

# --no-isolate: each worker imports a project's modules once for all the files it runs, not once per
# file (vitest's default). On a loaded 2-core run the import time summed over the files was 923 s
# isolated and 149 s shared, and the whole run 1,561 s and 885 s. No test mocks modules or stubs
# globals; files that start servers stop them in their own hooks.
step "running tests (vitest: packages, apps, e2e)"
results=.wirestream/test-results.json
rm -f "$results"
set +e
vitest run --no-isolate --reporter=default --reporter=json --outputFile.json="$results" "$@"
status=$?
step "waiting for typecheck and lint"
wait "$checks_pid"
checks_status=$?
set -e
if ((checks_status != 0)); then cat "$checks_log"; else tail -n 4 "$checks_log"; fi

node scripts/test-summary.mjs "$results" "$status" "$(( $(date +%s) - started ))" "typecheck+lint+docs=$checks_status"
