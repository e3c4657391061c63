#!/usr/bin/env bash
# Starts a throwaway redis-server (no persistence, loopback only) in the background and waits for PING.
#
# Usage: infra/redis/start.sh [--port N] [--dir DIR] [--timeout SECONDS]
#   --port     port to listen on; never 6379       default: a free port
#   --dir      pid file, log file, working dir      default <repo>/.wirestream/redis-<port>
#   --timeout  PING deadline in seconds             default 10
# Installs Debian's redis-server when it is missing. Prints the port and URL; the last line is
# the URL alone so callers can take it with `| tail -n1`. Stop it with infra/redis/stop.sh.
#
# 6379 is the machine's shared Redis (started before the session, used by other tools):
# these scripts refuse to start or stop anything there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
port=""
dir=""
timeout_s=10
reserved_port=6379

die() { echo "start.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --port) need_value "$@"; port="$2"; shift 2 ;;
    --dir) need_value "$@"; dir="$2"; shift 2 ;;
    --timeout) need_value "$@"; timeout_s="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout must be whole seconds, got '$timeout_s'"

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "redis-server not found; installing Debian's redis-server" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
fi

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [[ -z "$port" ]]; then
  # A random port in a range the kernel does not hand out as ephemeral (32768+ on Linux), retried
  # until one does not answer. Racy like any free-port pick, but only against ourselves.
  for _ in $(seq 1 50); do
    candidate=$(( 20000 + RANDOM % 12000 ))
    if [[ $candidate -ne $reserved_port ]] && ! port_taken "$candidate"; then port=$candidate; break; fi
  done
  [[ -n "$port" ]] || { echo "start.sh: found no free port in 20000-31999 after 50 tries" >&2; exit 1; }
fi
if ! [[ "$port" =~ ^[0-9]+$ ]] || (( port < 1 || port > 65535 )); then die "--port must be 1..65535, got '$port'"; fi
[[ "$port" -ne $reserved_port ]] || die "--port $reserved_port is the machine's shared Redis; pick another port or omit --port"
if port_taken "$port"; then echo "start.sh: 127.0.0.1:$port is already in use; pick another --port" >&2; exit 1; fi

dir="${dir:-$repo/.wirestream/redis-$port}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

start_ns=$(date +%s%N)
# --save '' and --appendonly no: nothing is written to disk, so every start is empty and no
# test can see another run's keys.
redis-server --daemonize yes --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"

deadline=$(( $(date +%s) + timeout_s ))
until [[ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" == "PONG" ]]; do
  if (( $(date +%s) >= deadline )); then
    echo "start.sh: redis on 127.0.0.1:$port did not answer PING within ${timeout_s}s; last lines of $dir/redis.log:" >&2
    tail -n 20 "$dir/redis.log" >&2 || true
    exit 1
  fi
  sleep 0.05
done
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
echo "redis ready on 127.0.0.1:$port in ${elapsed_ms}ms (pid $(cat "$dir/redis.pid"), dir $dir)"
echo "redis://127.0.0.1:$port"
