#!/usr/bin/env bash
# Stops the nodes of a cluster started by infra/kafka/start-cluster.sh, all at once, each by
# stop.sh (SIGTERM, SIGKILL after the deadline). Succeeds when nothing runs; the data is kept.
#
# Usage: infra/kafka/stop-cluster.sh --data-dir DIR [--node ID] [--timeout SECONDS] [--kill]
#   --data-dir  the dir given to start-cluster.sh
#   --node      stop only this node (a fault test's "broker down")
#   --timeout   seconds to wait after SIGTERM          default 30
#   --kill      SIGKILL at once (throwaway test data, or a crash)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data_dir=""
only_node=""
stop_args=()

die() { echo "stop-cluster.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir) need_value "$@"; data_dir="$2"; shift 2 ;;
    --node) need_value "$@"; only_node="$2"; shift 2 ;;
    --timeout) need_value "$@"; stop_args+=(--timeout "$2"); shift 2 ;;
    --kill) stop_args+=(--kill); shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n "$data_dir" ]] || die "--data-dir is required (the dir given to start-cluster.sh)"
[[ -z "$only_node" || -d "$data_dir/node-$only_node" ]] || die "no node $only_node in $data_dir"

pids=()
for dir in "$data_dir"/node-*/; do
  [[ -d "$dir" ]] || continue
  id="$(basename "$dir")"; id="${id#node-}"
  [[ -z "$only_node" || "$id" == "$only_node" ]] || continue
  "$here/stop.sh" --data-dir "$dir" "${stop_args[@]}" | sed "s/^/node $id: /" &
  pids+=("$!")
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
(( ${#pids[@]} > 0 )) || echo "kafka cluster not running (no node dirs in $data_dir)"
exit "$status"
