#!/usr/bin/env bash
# Fetches the Apache Kafka broker's runtime classpath from Maven Central into infra/kafka/lib/.
#
# Idempotent: lib/.stamp holds the sha256 of pom.xml that produced lib/; when it matches, nothing
# runs (a no-op costs ~10 ms, so tests may call this every time). A changed pom wipes lib/ first
# so jars of an old version never linger on the classpath.
#
# Usage: infra/kafka/fetch.sh [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lib="$here/lib"
stamp="$lib/.stamp"
force=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --force) force=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "fetch.sh: unknown argument '$1' (expected --force)" >&2; exit 2 ;;
  esac
done

want="$(sha256sum "$here/pom.xml" | cut -d' ' -f1)"
up_to_date() { [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; }
if [[ $force -eq 0 ]] && up_to_date; then
  echo "kafka lib up to date ($(find "$lib" -name '*.jar' | wc -l) jars in $lib)"
  exit 0
fi

# Several test projects may start a broker at once on a fresh checkout: one fetches, the others
# wait for it and then find lib/ complete. target/ is git-ignored.
mkdir -p "$here/target"
exec 9>"$here/target/fetch.lock"
flock 9
if [[ $force -eq 0 ]] && up_to_date; then
  echo "kafka lib up to date (fetched by a concurrent run)"
  exit 0
fi

command -v mvn >/dev/null || { echo "fetch.sh: mvn not found; install Maven (apt-get install -y maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "fetch.sh: java not found; Kafka 4.x needs Java 17+ (apt-get install -y openjdk-17-jre-headless)" >&2; exit 1; }

start_ns=$(date +%s%N)
rm -rf "$lib"
mkdir -p "$lib"
# -f with an absolute path: works from any cwd. The target/ folder Maven may create is git-ignored.
# Output is kept only for a failure: -q still prints stray ANSI resets on success.
# FETCH_MVN_ARGS lets CI or a benchmark pass e.g. -Dmaven.repo.local=DIR (a cold-cache measurement).
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086
if ! mvn -q -B -Dstyle.color=never ${FETCH_MVN_ARGS:-} -f "$here/pom.xml" dependency:copy-dependencies >"$log" 2>&1; then
  cat "$log" >&2
  echo "fetch.sh: mvn dependency:copy-dependencies failed (is Maven Central reachable? see above)" >&2
  rm -rf "$lib"
  exit 1
fi
jars=$(find "$lib" -name '*.jar' | wc -l)
if ! ls "$lib"/kafka_2.13-*.jar >/dev/null 2>&1; then
  echo "fetch.sh: Maven finished but no kafka_2.13 jar is in $lib" >&2
  exit 1
fi
echo "$want" > "$stamp"
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
printf 'kafka lib fetched: %d jars in %d.%03ds\n' "$jars" $((elapsed_ms / 1000)) $((elapsed_ms % 1000))
