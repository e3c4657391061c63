#!/usr/bin/env bash
# Stops a redis-server started by infra/redis/start.sh (SIGTERM, SIGKILL after the deadline).
# Succeeds when nothing runs.
#
# Usage: infra/redis/stop.sh (--port N | --dir DIR) [--timeout SECONDS]
#   --port     the port given to start.sh (its default dir <repo>/.wirestream/redis-<port>)
#   --dir      the dir given to start.sh
#   --timeout  seconds to wait after SIGTERM       default 10
# Only a pid from start.sh's pid file is signalled, and never the machine's Redis on 6379.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
port=""
dir=""
timeout_s=10
reserved_port=6379

die() { echo "stop.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --port) need_value "$@"; port="$2"; shift 2 ;;
    --dir) need_value "$@"; dir="$2"; shift 2 ;;
    --timeout) need_value "$@"; timeout_s="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n "$port" || -n "$dir" ]] || die "give --port N or --dir DIR"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout must be whole seconds, got '$timeout_s'"
[[ -z "$port" || "$port" -ne $reserved_port ]] || die "refusing to stop the machine's shared Redis on $reserved_port"
dir="${dir:-$repo/.wirestream/redis-$port}"
pid_file="$dir/redis.pid"

if [[ ! -f "$pid_file" ]]; then echo "redis not running (no $pid_file)"; exit 0; fi
pid="$(cat "$pid_file")"
[[ "$pid" =~ ^[0-9]+$ ]] || die "$pid_file does not hold a pid: '$pid'"
cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
# A stale pid file may name a recycled pid; only signal a redis-server, and never the shared one.
if [[ "$cmdline" != *redis-server* ]]; then
  echo "redis not running (stale pid $pid)"; rm -f "$pid_file"; exit 0
fi
[[ "$cmdline" != *":$reserved_port"* ]] || die "pid $pid is the shared Redis on $reserved_port ($cmdline); not stopping it"

alive() { local s; s="$(awk '/^State:/{print $2}' "/proc/$1/status" 2>/dev/null)"; [[ -n "$s" && "$s" != Z ]]; }
kill -TERM "$pid" 2>/dev/null || true
deadline=$(( $(date +%s) + timeout_s ))
while alive "$pid"; do
  if (( $(date +%s) >= deadline )); then
    echo "stop.sh: redis pid $pid still running ${timeout_s}s after SIGTERM; sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.2
    break
  fi
  sleep 0.05
done
rm -f "$pid_file"
echo "redis stopped (pid $pid)"
