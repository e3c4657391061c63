#!/usr/bin/env bash
# Starts a Kafka cluster of N nodes on this machine (default 3), each a combined broker+controller
# run by start.sh with its own node id, ports and data dir, and waits until every node answers
# and lists all N brokers in its metadata. The controller quorum is static (controller.quorum.voters,
# all N nodes vote): with 3, the cluster survives the loss of any one node, the active controller
# included. Static, not the dynamic quorum start.sh formats alone: a dynamic quorum of 3 must be
# formatted with --initial-controllers naming every voter's directory id, and tests never add voters.
#
# Topics get replication factor min(N, 3) and min.insync.replicas RF-1 (3 and 2): an acks=all
# write succeeds with one broker down and fails with two, which is what fault tests exercise.
#
# Usage: infra/kafka/start-cluster.sh [--ports P1,P2,P3] [--controller-ports C1,C2,C3]
#                                     [--data-dir DIR] [--timeout SECONDS] [--watch-pid PID]
#        infra/kafka/start-cluster.sh --data-dir DIR --node ID [--timeout SECONDS] [--watch-pid PID]
#   --ports             client ports, one per node (their count is the cluster size)
#                                                     default 9092,9094,9096
#   --controller-ports  KRaft controller ports        default each port+1
#   --data-dir          DIR/cluster.conf (ports, cluster id) and DIR/node-<id>/ (what start.sh keeps)
#                                                     default <repo>/.wirestream/kafka-cluster-<P1>
#   --node              (re)start only this node of an existing DIR, on its ports and data
#                       (a fault test's restart after a kill); the others must be running
#   --timeout           readiness deadline in seconds default 120
#   --watch-pid         stop every node when this process exits (start.sh's watchdog)
# Env: KAFKA_HEAP_OPTS (default here -Xms128m -Xmx384m: three JVMs on a shared 24 GiB machine),
#      KAFKA_JVM_OPTS (extra JVM flags).
#
# An existing DIR keeps its data and cluster id; its cluster.conf wins over --ports.
# Stop with infra/kafka/stop-cluster.sh --data-dir DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"

ports_csv="9092,9094,9096"
controller_ports_csv=""
data_dir=""
only_node=""
timeout_s=120
watch_pid=""

die() { echo "start-cluster.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ports) need_value "$@"; ports_csv="$2"; shift 2 ;;
    --controller-ports) need_value "$@"; controller_ports_csv="$2"; shift 2 ;;
    --data-dir) need_value "$@"; data_dir="$2"; shift 2 ;;
    --node) need_value "$@"; only_node="$2"; shift 2 ;;
    --timeout) need_value "$@"; timeout_s="$2"; shift 2 ;;
    --watch-pid) need_value "$@"; watch_pid="$2"; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout must be whole seconds, got '$timeout_s'"

IFS=, read -r -a ports <<<"$ports_csv"
data_dir="${data_dir:-$repo/.wirestream/kafka-cluster-${ports[0]}}"
mkdir -p "$data_dir"
data_dir="$(cd "$data_dir" && pwd)"
conf="$data_dir/cluster.conf"

if [[ -f "$conf" ]]; then
  # shellcheck source=/dev/null # written below by an earlier start
  source "$conf"
  IFS=, read -r -a ports <<<"$ports_csv"
else
  [[ -z "$only_node" ]] || die "--node $only_node needs an existing cluster in $data_dir (no $conf)"
  if [[ -z "$controller_ports_csv" ]]; then
    controller_ports_csv="$(for p in "${ports[@]}"; do printf '%s,' "$((p + 1))"; done)"
    controller_ports_csv="${controller_ports_csv%,}"
  fi
  cluster_id="$(new_cluster_id)"
fi
IFS=, read -r -a controller_ports <<<"$controller_ports_csv"

nodes=${#ports[@]}
(( nodes >= 1 )) || die "--ports needs at least one port"
(( ${#controller_ports[@]} == nodes )) || die "--controller-ports needs one port per node: $nodes client ports, ${#controller_ports[@]} controller ports"
all_ports="$(printf '%s\n' "${ports[@]}" "${controller_ports[@]}")"
for p in $all_ports; do is_port "$p" || die "ports must be 1..65535, got '$p'"; done
dupes="$(sort <<<"$all_ports" | uniq -d | tr '\n' ' ')"
[[ -z "$dupes" ]] || die "every client and controller port must differ; repeated: $dupes"
if [[ -n "$only_node" ]]; then
  [[ "$only_node" =~ ^[0-9]+$ ]] && (( only_node >= 1 && only_node <= nodes )) \
    || die "--node must be 1..$nodes (the cluster in $data_dir has $nodes nodes), got '$only_node'"
fi

for (( id = 1; id <= nodes; id++ )); do
  [[ -n "$only_node" && "$id" != "$only_node" ]] && continue
  pid_file="$data_dir/node-$id/kafka.pid"
  if [[ -f "$pid_file" ]] && alive "$(cat "$pid_file")"; then
    echo "start-cluster.sh: node $id already runs from $data_dir/node-$id (pid $(cat "$pid_file")); stop it with infra/kafka/stop-cluster.sh --data-dir $data_dir${only_node:+ --node $id}" >&2
    exit 1
  fi
done

# Saved before any node starts, so a restart (--node) and stop-cluster.sh find the layout.
cat >"$conf" <<CONF
# Written by infra/kafka/start-cluster.sh on the first start of this dir; read back by later starts.
ports_csv=$ports_csv
controller_ports_csv=$controller_ports_csv
cluster_id=$cluster_id
CONF

voters=""
for (( i = 0; i < nodes; i++ )); do voters+="$((i + 1))@127.0.0.1:${controller_ports[i]},"; done
voters="${voters%,}"
replication_factor=$(( nodes < 3 ? nodes : 3 ))
min_insync_replicas=$(( replication_factor > 1 ? replication_factor - 1 : 1 ))
# Three brokers plus the tests' own processes on 2 cores and a shared 24 GiB: smaller than start.sh's
# 512 MiB, still no GC pressure for test traffic.
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx384m}"

# Runs start.sh for node $1 in the background; its output goes to node-<id>/start.out.
start_node() {
  local id="$1" dir="$data_dir/node-$1"
  mkdir -p "$dir"
  "$here/start.sh" --node-id "$id" --port "${ports[id - 1]}" --controller-port "${controller_ports[id - 1]}" \
    --data-dir "$dir" --timeout "$timeout_s" ${watch_pid:+--watch-pid "$watch_pid"} \
    --controller-quorum-voters "$voters" --cluster-id "$cluster_id" \
    --replication-factor "$replication_factor" --min-insync-replicas "$min_insync_replicas" \
    --wait-brokers "$nodes" >"$dir/start.out" 2>&1 &
  starters[$!]="$id"
}

start_ns=$(date +%s%N)
declare -A starters=() # start.sh pid -> node id
if [[ -n "$only_node" ]]; then
  start_node "$only_node"
else
  # All at once: no node is ready before a quorum of controllers runs.
  for (( id = 1; id <= nodes; id++ )); do start_node "$id"; done
fi

# A node that fails (port taken, crashed JVM, deadline) fails the whole start: stop what this run
# started, so a caller that retries on other ports leaves nothing behind.
failed=""
while (( ${#starters[@]} > 0 )); do
  status=0
  wait -n -p done_pid "${!starters[@]}" || status=$?
  id="${starters[$done_pid]}"
  unset "starters[$done_pid]"
  if (( status != 0 )); then
    failed="$id"
    break
  fi
done
if [[ -n "$failed" ]]; then
  cat "$data_dir/node-$failed/start.out" >&2
  for pid in "${!starters[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for (( id = 1; id <= nodes; id++ )); do
    [[ -n "$only_node" && "$id" != "$only_node" ]] && continue
    "$here/stop.sh" --data-dir "$data_dir/node-$id" --kill >/dev/null 2>&1 || true
  done
  echo "start-cluster.sh: node $failed failed to start (its output above; logs in $data_dir/node-$failed/server.log)" >&2
  exit 1
fi

elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
bootstrap="$(for p in "${ports[@]}"; do printf '127.0.0.1:%s,' "$p"; done)"
what="$nodes nodes"
[[ -z "$only_node" ]] || what="node $only_node of $nodes"
printf 'kafka cluster ready: %s, %s in %d.%01ds (RF %d, min.insync.replicas %d, data %s)\n' \
  "$what" "${bootstrap%,}" $((elapsed_ms / 1000)) $(((elapsed_ms % 1000) / 100)) \
  "$replication_factor" "$min_insync_replicas" "$data_dir"
