#!/bin/sh
# Creates the Redis Cluster over the StatefulSet's pods, once: 3 primaries + 3 replicas
# (`redis-cli --cluster create … --cluster-replicas 1`). The Job wirestream-redis-cluster-create runs
# it after an apply; it is idempotent, so a re-run (a new apply, a retried pod) changes nothing:
#   - some node already serves slots → the cluster exists: check it, exit 0 when it is healthy;
#   - nodes know each other but none serves a slot → an earlier create stopped half-way: stop and
#     say how to reset (never guess over a half-formed cluster);
#   - otherwise → create it, and wait until every node sees the whole cluster, ok.
#
# Environment: NODES ("host:port …"; default: every pod of the StatefulSet through the headless
# Service), WAIT_SECONDS (how long the pods may take to answer, default 600).
set -eu

wait_seconds=${WAIT_SECONDS:-600}
deadline=$(( $(date +%s) + wait_seconds ))
if [ -z "${NODES:-}" ]; then
  NODES=""
  i=0
  while [ "$i" -lt "${CLUSTER_NODES:?CLUSTER_NODES: the StatefulSet replicas}" ]; do
    NODES="$NODES ${STATEFULSET:?}-$i.${SERVICE:?}:${REDIS_PORT:-6379}"
    i=$((i + 1))
  done
fi

say() { echo "create-cluster: $*"; }
# info NODE FIELD: one field of CLUSTER INFO on host:port
info() { redis-cli -h "${1%:*}" -p "${1##*:}" cluster info | tr -d '\r' | sed -n "s/^$2://p"; }

# address_of HOST: its IPv4 address (CLUSTER MEET takes addresses, not names).
address_of() {
  case "$1" in
    *[!0-9.]*) getent hosts "$1" | awk '{ print $1; exit }' ;;
    *) echo "$1" ;;
  esac
}

# exists NODE: when NODE serves slots the cluster exists: check it and end the script.
exists() {
  slots=$(info "$1" cluster_slots_assigned)
  [ "${slots:-0}" -gt 0 ] || return 0
  say "$1 already serves $slots slots: the cluster exists, nothing to create; checking it"
  if redis-cli --cluster check "$1"; then exit 0; fi
  say "the cluster exists but the check above failed: repair it by hand (redis-cli --cluster fix), see docs/operations.md" >&2
  exit 1
}

addresses=""
for node in $NODES; do
  until [ "$(redis-cli -h "${node%:*}" -p "${node##*:}" ping 2>/dev/null)" = PONG ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      say "$node did not answer PING within $wait_seconds s (is the pod running? kubectl get pods -l app.kubernetes.io/name=wirestream-redis-cluster)" >&2
      exit 1
    fi
    sleep 2
  done
  # An existing cluster is recognised at its first node that answers, without waiting for the rest.
  exists "$node"
  addresses="$addresses $(address_of "${node%:*}"):${node##*:}"
done

for node in $NODES; do
  known=$(info "$node" cluster_known_nodes)
  if [ "${known:-1}" -gt 1 ]; then
    say "$node knows $known nodes but no node serves a slot: an earlier create stopped half-way. Reset every node (redis-cli -h <node> cluster reset hard), then run the Job again." >&2
    exit 1
  fi
done

say "creating the cluster over$addresses"
# shellcheck disable=SC2086 # one word per node address
redis-cli --cluster create $addresses --cluster-replicas 1 --cluster-yes
count=$(echo $NODES | wc -w)
primaries=$((count / 2))
# Done when every node sees the cluster ok, all nodes, and each replica as a replica (gossip spreads
# the roles a moment after the create returns).
settled() {
  [ "$(info "$1" cluster_state)" = ok ] && [ "$(info "$1" cluster_known_nodes)" = "$count" ] &&
    [ "$(redis-cli -h "${1%:*}" -p "${1##*:}" cluster nodes | grep -c ' \(myself,\)\{0,1\}master ')" = "$primaries" ]
}
for node in $NODES; do
  until settled "$node"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then say "$node does not see an ok cluster of $count nodes, $primaries of them primaries, within $wait_seconds s" >&2; exit 1; fi
    sleep 1
  done
done
say "cluster created: every node sees $primaries primaries with a replica each, cluster_state:ok"
