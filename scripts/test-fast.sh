#!/usr/bin/env bash
# The fast lane for day-to-day work: only what your change can affect (against main, committed or
# not; WIRESTREAM_BASE=<ref> to compare with another ref). Typecheck and lint of the affected
# packages and their dependents (turbo --affected, cached), their unit tests (test files that start
# no server or process: scripts/affected-unit-tests.mjs) and the smallest profile of each affected
# bench (`bench:smoke`). One summary line, non-zero on any failure. scripts/test.sh stays the gate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
started=$(date +%s)
bootstrap

export TURBO_SCM_BASE="${WIRESTREAM_BASE:-main}"
if ! git rev-parse --verify --quiet "$TURBO_SCM_BASE" >/dev/null; then
  echo "no ref $TURBO_SCM_BASE to compare with (set WIRESTREAM_BASE): running every package" >&2
  affected=(--filter='*')
else
  affected=(--affected)
fi
mkdir -p .wirestream
checks=()

step "typechecking and linting the affected packages (turbo, cached)"
status=0; turbo run typecheck lint "${affected[@]}" --output-logs=errors-only || status=$?
checks+=("typecheck+lint=$status")

mapfile -t projects < <(turbo ls "${affected[@]}" --output=json 2>/dev/null \
  | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const p of JSON.parse(s).packages.items)if(p.path&&p.path!==".")console.log(p.path)})')
mapfile -t files < <(node scripts/affected-unit-tests.mjs "${projects[@]}")
results=.wirestream/test-fast-results.json
rm -f "$results"
if ((${#files[@]} > 0)); then
  step "unit tests of ${#projects[@]} affected projects (${#files[@]} files)"
  status=0; vitest run --reporter=default --reporter=json --outputFile.json="$results" "${files[@]}" || status=$?
else
  echo '{"numPassedTests":0,"testResults":[]}' >"$results"; status=0
fi
tests_status=$status

step "bench smoke runs (the smallest profile of each affected bench)"
status=0; turbo run bench:smoke "${affected[@]}" --concurrency=1 --output-logs=errors-only || status=$?
checks+=("bench-smoke=$status")

node scripts/test-summary.mjs "$results" "$tests_status" "$(( $(date +%s) - started ))" "${checks[@]}"
