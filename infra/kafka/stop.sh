#!/usr/bin/env bash
# Stops a broker started by infra/kafka/start.sh: SIGTERM (a clean shutdown), then SIGKILL after
# the deadline. Succeeds when nothing runs. The data dir is kept; delete it to start afresh.
#
# Usage: infra/kafka/stop.sh [--data-dir DIR | --port N] [--timeout SECONDS] [--kill]
#   --data-dir  the dir given to start.sh              default <repo>/.wirestream/kafka-<port>
#   --port      shorthand for that default dir         default 9092
#   --timeout   seconds to wait after SIGTERM          default 30
#   --kill      SIGKILL at once (throwaway test data; skips the ~1-5 s clean shutdown)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"
data_dir=""
port=9092
timeout_s=30
signal=TERM

die() { echo "stop.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir) need_value "$@"; data_dir="$2"; shift 2 ;;
    --port) need_value "$@"; port="$2"; shift 2 ;;
    --timeout) need_value "$@"; timeout_s="$2"; shift 2 ;;
    --kill) signal=KILL; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout must be whole seconds, got '$timeout_s'"
data_dir="${data_dir:-$repo/.wirestream/kafka-$port}"
pid_file="$data_dir/kafka.pid"

if [[ ! -f "$pid_file" ]]; then
  echo "kafka not running (no $pid_file)"
  exit 0
fi
pid="$(cat "$pid_file")"
[[ "$pid" =~ ^[0-9]+$ ]] || die "$pid_file does not hold a pid: '$pid'"
# Only signal the pid if it still is our java: a stale pid file may name a recycled pid.
if ! alive "$pid" || ! grep -q 'kafka\.Kafka' "/proc/$pid/cmdline" 2>/dev/null; then
  echo "kafka not running (stale pid $pid)"
  rm -f "$pid_file"
  exit 0
fi

start_ns=$(date +%s%N)
# The broker leads its own process group (start.sh uses setsid), so signal the group.
kill "-$signal" -- "-$pid" 2>/dev/null || true
deadline=$(( $(date +%s) + timeout_s ))
while alive "$pid"; do
  if (( $(date +%s) >= deadline )); then
    echo "stop.sh: pid $pid still running ${timeout_s}s after SIGTERM; sending SIGKILL" >&2
    kill -KILL -- "-$pid" 2>/dev/null || true
    deadline=$(( $(date +%s) + 5 ))
    while alive "$pid"; do
      (( $(date +%s) < deadline )) || { echo "stop.sh: pid $pid survived SIGKILL" >&2; exit 1; }
      sleep 0.1
    done
    break
  fi
  sleep 0.1
done
rm -f "$pid_file"
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
printf 'kafka stopped (pid %s, SIG%s) in %d.%01ds\n' "$pid" "$signal" $((elapsed_ms / 1000)) $(((elapsed_ms % 1000) / 100))
