#!/bin/sh
# One Redis Cluster node of the StatefulSet wirestream-redis-cluster (POSIX sh: the redis image's dash).
#
# A pod keeps its identity across restarts (nodes.conf on its volume) but not its IP address. It
# announces its current one (--cluster-announce-ip), and a peer that still reaches it at the old one
# learns the new one from the first gossip message. When every pod restarted at once (a full
# cluster restart, all addresses new), no node can reach any other at the address it recorded, so a
# node that rejoins meets each peer at the address its name resolves to now: a node already known
# under that id only updates its address (CLUSTER MEET then handshake, no new member).
#
# Environment: POD_IP, POD_NAME (the downward API); PEERS (default: every pod of the StatefulSet
# through the headless Service, "host:port[@busport] …"); REDIS_CONF, DATA_DIR, REDIS_PORT for tests.
# Arguments after the script go to redis-server.
set -eu

conf=${REDIS_CONF:-/etc/redis/redis.conf}
data=${DATA_DIR:-/data}
port=${REDIS_PORT:-6379}
if [ -z "${PEERS:-}" ]; then
  PEERS=""
  i=0
  while [ "$i" -lt "${CLUSTER_NODES:?CLUSTER_NODES: the StatefulSet replicas}" ]; do
    PEERS="$PEERS ${STATEFULSET:?}-$i.${SERVICE:?}:$port"
    i=$((i + 1))
  done
fi

rejoining=no
[ -f "$data/nodes.conf" ] && rejoining=yes

redis-server "$conf" --cluster-announce-ip "${POD_IP:?POD_IP: set from status.podIP}" "$@" &
pid=$!
# PID 1 must pass SIGTERM on: redis-server flushes the AOF and exits. It refuses while it writes its
# first AOF (right after a full sync from its primary) and goes on running, so ask until it stops.
stop() {
  kill -TERM "$pid" 2>/dev/null || return 0
  while sleep 1 && kill -0 "$pid" 2>/dev/null; do kill -TERM "$pid" 2>/dev/null || true; done
}
trap stop TERM INT

# address_of HOST: its IPv4 address now (CLUSTER MEET takes addresses, not names); empty when it does not resolve yet.
address_of() {
  case "$1" in
    *[!0-9.]*) getent hosts "$1" | awk '{ print $1; exit }' ;;
    *) echo "$1" ;;
  esac
}

meet_peers() {
  until [ "$(redis-cli -h "$POD_IP" -p "$port" ping 2>/dev/null)" = PONG ]; do sleep 1; done
  # Peers that start later meet this node themselves; three rounds catch the ones a little behind.
  for _round in 1 2 3; do
    for peer in $PEERS; do
      host=${peer%%:*}
      rest=${peer#*:}
      peer_port=${rest%@*}
      bus=""
      case "$rest" in *@*) bus=${rest#*@} ;; esac
      ip=$(address_of "$host")
      [ -n "$ip" ] || continue
      [ "$ip" = "$POD_IP" ] && [ "$peer_port" = "$port" ] && continue
      # shellcheck disable=SC2086 # $bus is empty or one number
      redis-cli -h "$POD_IP" -p "$port" cluster meet "$ip" "$peer_port" $bus >/dev/null 2>&1 || true
    done
    sleep 10
  done
}
meeting=""
if [ "$rejoining" = yes ]; then
  meet_peers &
  meeting=$!
fi

status=0
wait "$pid" || status=$?
# A trapped signal interrupts `wait` (status > 128): wait again, for redis-server's own exit status.
if [ "$status" -gt 128 ]; then
  status=0
  wait "$pid" || status=$?
fi
[ -z "$meeting" ] || kill "$meeting" 2>/dev/null || true
exit "$status"
