#!/bin/sh
# Readiness of a Redis Cluster node: it answers, and once it is part of a cluster, that cluster is
# ok from its point of view. Before the cluster exists (the node knows only itself) answering is
# enough, so the create Job can reach it. An unready node stops the PodDisruptionBudget from
# allowing another eviction while the cluster is failing over.
set -eu
port=${REDIS_PORT:-6379}
[ "$(redis-cli -p "$port" ping)" = PONG ] || exit 1
info=$(redis-cli -p "$port" cluster info | tr -d '\r')
known=$(printf '%s\n' "$info" | sed -n 's/^cluster_known_nodes://p')
[ "${known:-1}" -le 1 ] && exit 0
printf '%s\n' "$info" | grep -qx 'cluster_state:ok'
