#!/usr/bin/env bash
# Starts one Apache Kafka node (KRaft, combined broker+controller) in the background and waits
# until it answers a real Kafka request. Alone it is a single-node broker; start-cluster.sh runs it
# once per node of a cluster with the cluster options below.
#
# Usage: infra/kafka/start.sh [--port N] [--controller-port M] [--data-dir DIR]
#                             [--timeout SECONDS] [--watch-pid PID]
#                             [--node-id ID --controller-quorum-voters VOTERS --cluster-id CID
#                              --replication-factor RF --min-insync-replicas MIN --wait-brokers N]
#                             [--security [--sasl-ssl-port N] [--ssl-port N] [--sasl-plaintext-port N]]
#   --port             client (PLAINTEXT) port                    default 9092
#   --controller-port  KRaft controller port                      default port+1
#   --data-dir         config, logs, pid file, partitions          default <repo>/.wirestream/kafka-<port>
#   --timeout          readiness deadline in seconds              default 60
#   --watch-pid        stop the broker when this process exits (a crashed test run must not leave
#                      a JVM behind; the watchdog polls once a second)
#   cluster options (start-cluster.sh passes them; defaults are the single node's):
#   --node-id                   node.id                                       default 1
#   --controller-quorum-voters  static quorum, id@host:port,... (this node's    default: none, a
#                               controller port among them)                  one-node dynamic quorum
#   --cluster-id                the id every node's storage is formatted with default: random
#   --replication-factor        of new and internal topics                   default 1
#   --min-insync-replicas       for acks=all writes                          default 1
#   --wait-brokers              ready also needs this many live brokers in    default 1
#                               this node's metadata
#   security (single node only; see security.sh and README.md for listeners, users, certificates):
#   --security             adds SASL_SSL (PLAIN, SCRAM-SHA-256/512,  default: off, PLAINTEXT only
#                          OAUTHBEARER unsecured), SSL with mTLS and
#                          SASL_PLAINTEXT listeners next to PLAINTEXT,
#                          turns the StandardAuthorizer on, writes a
#                          throwaway CA and certificates and
#                          DIR/security/clients.json
#   --sasl-ssl-port        SASL_SSL listener port                     default port+2
#   --ssl-port             SSL (client certificate required) port    default port+3
#   --sasl-plaintext-port  SASL_PLAINTEXT listener port               default port+4
# Env: KAFKA_HEAP_OPTS (default -Xms256m -Xmx512m), KAFKA_JVM_OPTS (extra JVM flags).
#
# Re-running with an existing data dir keeps its data (storage is formatted only once), so a test
# can stop and start the same broker. Stop it with infra/kafka/stop.sh --data-dir DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
lib="$here/lib"
# shellcheck source=common.sh
source "$here/common.sh"
# shellcheck source=security.sh
source "$here/security.sh"

port=9092
controller_port=""
data_dir=""
timeout_s=60
watch_pid=""
node_id=1
voters=""
cluster_id=""
replication_factor=1
min_insync_replicas=1
wait_brokers=1
security=0
sasl_ssl_port=""
ssl_port=""
sasl_plaintext_port=""

die() { echo "start.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --port) need_value "$@"; port="$2"; shift 2 ;;
    --controller-port) need_value "$@"; controller_port="$2"; shift 2 ;;
    --data-dir) need_value "$@"; data_dir="$2"; shift 2 ;;
    --timeout) need_value "$@"; timeout_s="$2"; shift 2 ;;
    --watch-pid) need_value "$@"; watch_pid="$2"; shift 2 ;;
    --node-id) need_value "$@"; node_id="$2"; shift 2 ;;
    --controller-quorum-voters) need_value "$@"; voters="$2"; shift 2 ;;
    --cluster-id) need_value "$@"; cluster_id="$2"; shift 2 ;;
    --replication-factor) need_value "$@"; replication_factor="$2"; shift 2 ;;
    --min-insync-replicas) need_value "$@"; min_insync_replicas="$2"; shift 2 ;;
    --wait-brokers) need_value "$@"; wait_brokers="$2"; shift 2 ;;
    --security) security=1; shift ;;
    --sasl-ssl-port) need_value "$@"; sasl_ssl_port="$2"; shift 2 ;;
    --ssl-port) need_value "$@"; ssl_port="$2"; shift 2 ;;
    --sasl-plaintext-port) need_value "$@"; sasl_plaintext_port="$2"; shift 2 ;;
    -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
controller_port="${controller_port:-$((port + 1))}"
data_dir="${data_dir:-$repo/.wirestream/kafka-$port}"

is_port "$port" || die "--port must be 1..65535, got '$port'"
is_port "$controller_port" || die "--controller-port must be 1..65535, got '$controller_port'"
[[ "$port" != "$controller_port" ]] || die "--port and --controller-port must differ (both $port)"
all_ports=("$port" "$controller_port")
if (( security )); then
  [[ -z "$voters" ]] || die "--security is for a single node; it cannot be combined with --controller-quorum-voters"
  sasl_ssl_port="${sasl_ssl_port:-$((port + 2))}"
  ssl_port="${ssl_port:-$((port + 3))}"
  sasl_plaintext_port="${sasl_plaintext_port:-$((port + 4))}"
  for opt in sasl_ssl_port ssl_port sasl_plaintext_port; do
    is_port "${!opt}" || die "--${opt//_/-} must be 1..65535, got '${!opt}'"
  done
  all_ports+=("$sasl_ssl_port" "$ssl_port" "$sasl_plaintext_port")
  [[ "$(printf '%s\n' "${all_ports[@]}" | sort -u | wc -l)" == 5 ]] \
    || die "--port, --controller-port, --sasl-ssl-port, --ssl-port and --sasl-plaintext-port must all differ (got ${all_ports[*]})"
elif [[ -n "$sasl_ssl_port$ssl_port$sasl_plaintext_port" ]]; then
  die "--sasl-ssl-port, --ssl-port and --sasl-plaintext-port need --security"
fi
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout must be whole seconds, got '$timeout_s'"
[[ -z "$watch_pid" || "$watch_pid" =~ ^[0-9]+$ ]] || die "--watch-pid must be a pid, got '$watch_pid'"
for opt in node_id replication_factor min_insync_replicas wait_brokers; do
  [[ "${!opt}" =~ ^[0-9]+$ ]] || die "--${opt//_/-} must be a whole number, got '${!opt}'"
done
(( min_insync_replicas <= replication_factor )) || die "--min-insync-replicas ($min_insync_replicas) must be <= --replication-factor ($replication_factor): no acks=all write could ever succeed"
if [[ -n "$voters" ]]; then
  [[ ",$voters," == *",$node_id@"*":$controller_port,"* ]] \
    || die "--controller-quorum-voters '$voters' must list this node as $node_id@<host>:$controller_port"
fi

[[ -f "$lib/.stamp" ]] || { echo "start.sh: $lib is missing or incomplete; run infra/kafka/fetch.sh first" >&2; exit 1; }
command -v java >/dev/null || { echo "start.sh: java not found; Kafka 4.x needs Java 17+" >&2; exit 1; }

mkdir -p "$data_dir"
data_dir="$(cd "$data_dir" && pwd)"
pid_file="$data_dir/kafka.pid"
log_file="$data_dir/server.log"
props="$data_dir/server.properties"

if [[ -f "$pid_file" ]] && alive "$(cat "$pid_file")"; then
  echo "start.sh: a broker already runs from $data_dir (pid $(cat "$pid_file")); stop it with infra/kafka/stop.sh --data-dir $data_dir" >&2
  exit 1
fi
for p in "${all_ports[@]}"; do
  if port_taken "$p"; then echo "start.sh: 127.0.0.1:$p is already in use; pick another port (see --help)" >&2; exit 1; fi
done
if (( security )); then
  [[ ! -f "$data_dir/data/meta.properties" || -f "$data_dir/security/scram-users-added" ]] \
    || { echo "start.sh: $data_dir was formatted without --security (no SCRAM users); use a fresh --data-dir" >&2; exit 1; }
  security_make_files "$data_dir/security" || exit 1
fi

# Rewritten on every start so a changed port takes effect on an existing data dir.
cat >"$props" <<PROPS
# Generated by infra/kafka/start.sh; edits are overwritten on the next start.
process.roles=broker,controller
node.id=$node_id
$(if [[ -n "$voters" ]]; then
  echo "controller.quorum.voters=$voters"
else
  echo "controller.quorum.bootstrap.servers=127.0.0.1:$controller_port"
fi)
$(if (( security )); then
  security_listener_props "$port" "$controller_port" "$sasl_ssl_port" "$ssl_port" "$sasl_plaintext_port"
else
  echo "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port"
  echo "advertised.listeners=PLAINTEXT://127.0.0.1:$port"
  echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
fi)
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$data_dir/data

# A single node makes do with one replica of everything; a cluster passes its own (3 and 2).
default.replication.factor=$replication_factor
min.insync.replicas=$min_insync_replicas
offsets.topic.replication.factor=$replication_factor
transaction.state.log.replication.factor=$replication_factor
transaction.state.log.min.isr=$min_insync_replicas
share.coordinator.state.topic.replication.factor=$replication_factor
share.coordinator.state.topic.min.isr=$min_insync_replicas
# The first group to join creates __consumer_offsets; 50 partitions (the default) cost ~1-2 s here.
offsets.topic.num.partitions=5
transaction.state.log.num.partitions=5

num.partitions=3
auto.create.topics.enable=true
delete.topic.enable=true
# Tests join groups constantly: the default 3 s delay would be paid on every first join.
group.initial.rebalance.delay.ms=0

# After a SIGKILL the controller keeps the old broker registration until its session expires
# (default 9 s) and refuses the restarted broker (DUPLICATE_BROKER_REGISTRATION) meanwhile; fault
# tests restart often, so expire sessions fast. The heartbeat must stay well below the timeout.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500

# Sized for a 2-core machine and short-lived data.
num.network.threads=2
num.io.threads=4
log.segment.bytes=16777216
log.retention.hours=24
log.cleaner.dedupe.buffer.size=16777216
$( (( ! security )) || security_props "$data_dir/security")
PROPS

# log4j2 (Kafka 4.x): console -> server.log. The 'Kafka Server started' line comes from
# kafka.server.KafkaRaftServer at INFO; state-change and request logs are noise for tests.
cat >"$data_dir/log4j2.properties" <<'LOG4J'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
# The full config is dumped ~9 times at start-up (~2,000 lines); server.properties says the same.
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
LOG4J

if [[ ! -f "$data_dir/data/meta.properties" ]]; then
  [[ -n "$cluster_id" ]] || cluster_id="$(new_cluster_id)"
  # --standalone: Kafka 4.x formats a single-node dynamic quorum (controller.quorum.bootstrap.servers).
  # A static quorum (controller.quorum.voters) is named by the config: StorageTool refuses --standalone.
  quorum_args=(--standalone)
  [[ -z "$voters" ]] || quorum_args=()
  (( ! security )) || mapfile -t -O "${#quorum_args[@]}" quorum_args < <(security_scram_format_args)
  # C1 only + SerialGC: a short-lived tool, ~0.1 s faster to start.
  if ! java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$lib/*" -Dlog4j2.configurationFile="$data_dir/log4j2.properties" \
      kafka.tools.StorageTool format --config "$props" --cluster-id "$cluster_id" "${quorum_args[@]}" \
      >"$data_dir/format.log" 2>&1; then
    cat "$data_dir/format.log" >&2
    echo "start.sh: formatting storage in $data_dir/data failed (see above)" >&2
    exit 1
  fi
  (( ! security )) || touch "$data_dir/security/scram-users-added"
fi
(( ! security )) || security_write_clients_json "$data_dir/security" "$port" "$sasl_ssl_port" "$ssl_port" "$sasl_plaintext_port"

start_ns=$(date +%s%N)
rm -f "$pid_file" # a stale one (SIGKILLed broker) would be read back below as the new pid
# SerialGC: on 2 cores it starts fastest and a 512 MiB heap keeps its pauses short.
heap_opts="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
# setsid: the broker gets its own session and process group (pgid = pid), so it outlives this
# script, ignores the terminal's Ctrl-C, and stop.sh can signal the whole group.
# shellcheck disable=SC2086,SC2016 # word-split the JVM flags; $$ is the inner shell's
setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pid_file" \
  java $heap_opts -XX:+UseSerialGC -Djava.awt.headless=true ${KAFKA_JVM_OPTS:-} \
  -Dlog4j2.configurationFile="$data_dir/log4j2.properties" -Dkafka.logs.dir="$data_dir" \
  -cp "$lib/*" kafka.Kafka "$props" \
  >"$log_file" 2>&1 </dev/null &

for _ in $(seq 1 100); do [[ -s "$pid_file" ]] && break; sleep 0.02; done
[[ -s "$pid_file" ]] || { echo "start.sh: the broker wrote no pid file ($pid_file) within 2 s; see $log_file" >&2; exit 1; }
pid="$(cat "$pid_file")"

if [[ -n "$watch_pid" ]]; then
  # Watchdog: its own session too, so it survives this script; it exits when either side is gone.
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid bash -c "$(declare -f alive)"'
    while alive "$0" && alive "$1"; do sleep 1; done
    if alive "$1"; then
      kill -TERM -- "-$1" 2>/dev/null
      for _ in $(seq 1 100); do alive "$1" || exit 0; sleep 0.1; done
      kill -KILL -- "-$1" 2>/dev/null
    fi' "$watch_pid" "$pid" >/dev/null 2>&1 </dev/null &
fi

# Ready = ApiVersions answers (see common.sh) and, for a cluster, this node's metadata lists every
# broker: a client bootstrapping from any node then sees the whole cluster.
ready() {
  api_versions_ok "$port" || return 1
  if (( security )); then
    # All listeners open together; a TCP accept on each is enough (their handshakes need a client).
    port_taken "$sasl_ssl_port" && port_taken "$ssl_port" && port_taken "$sasl_plaintext_port" || return 1
  fi
  (( wait_brokers <= 1 )) || (( $(metadata_broker_count "$port" || echo 0) >= wait_brokers ))
}
deadline=$(( $(date +%s) + timeout_s ))
until ready; do
  if ! alive "$pid"; then
    echo "start.sh: the broker (pid $pid) exited during start-up; last lines of $log_file:" >&2
    tail -n 40 "$log_file" >&2
    exit 1
  fi
  if (( $(date +%s) >= deadline )); then
    if api_versions_ok "$port"; then
      echo "start.sh: node $node_id on 127.0.0.1:$port answers but its metadata did not list $wait_brokers brokers within ${timeout_s}s (has $(metadata_broker_count "$port" || echo '?')); last lines of $log_file:" >&2
    else
      echo "start.sh: the broker did not answer on 127.0.0.1:$port within ${timeout_s}s; last lines of $log_file:" >&2
    fi
    tail -n 40 "$log_file" >&2
    kill -KILL -- "-$pid" 2>/dev/null || true
    exit 1
  fi
  sleep 0.1
done
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
printf 'kafka ready on 127.0.0.1:%s in %d.%01ds (pid %s, data %s)\n' \
  "$port" $((elapsed_ms / 1000)) $(((elapsed_ms % 1000) / 100)) "$pid" "$data_dir"
