# Functions shared by start.sh, stop.sh, start-cluster.sh and stop-cluster.sh. Sourced, not run.
# shellcheck shell=bash

# Alive = some thread of the process is not yet a zombie. A killed JVM's main thread turns zombie
# while its other threads are still exiting (its ports are closed only when the last one is
# gone), and PID 1 here may take a second or more to reap it; kill -0 is wrong both ways.
alive() {
  local t s
  for t in /proc/"$1"/task/*/status; do
    s="$(awk '/^State:/{print $2}' "$t" 2>/dev/null)"
    [[ -n "$s" && "$s" != Z && "$s" != X ]] && return 0
  done
  return 1
}

is_port() { [[ "$1" =~ ^[0-9]+$ ]] && (( $1 >= 1 && $1 <= 65535 )); }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A cluster id is 16 random bytes in URL-safe base64 without padding (what `random-uuid` prints),
# made here to save a JVM start (~1 s). One in 64 such ids starts with '-', which StorageTool's
# argument parser takes for an option: draw again.
new_cluster_id() {
  local id="-"
  while [[ "$id" == -* ]]; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  done
  printf '%s\n' "$id"
}

# Sends one raw request (hex, without the size prefix) to 127.0.0.1:$1 and prints the first $3
# bytes of the response as hex, size prefix included. Fails when nothing answers within 2 s.
kafka_request_hex() {
  local port="$1" body="$2" bytes="$3" size
  size="$(printf '%08x' $(( ${#body} / 2 )))"
  # shellcheck disable=SC2016 # expanded by the inner shell
  timeout 2 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
    printf "$(printf %s "$1" | sed "s/../\\\\x&/g")" >&3
    head -c "$2" <&3 | od -An -tx1' "$port" "$size$body" "$bytes" 2>/dev/null | tr -d ' \n'
}

# Ready = an ApiVersions v0 request gets a response with error_code 0. The broker only
# processes requests once it has caught up with the metadata log and been unfenced, so this
# is the same signal a client waits for, without starting a second JVM.
#   request:  api_key=18 | api_version=0 | correlation_id=1 | client_id=null(-1)
#   response: size(4) | correlation_id=1 (4) | error_code (2) | ...
api_versions_ok() {
  local hex
  hex="$(kafka_request_hex "$1" 0012000000000001ffff 10)" || return 1
  [[ "$hex" =~ ^[0-9a-f]{8}000000010000$ ]]
}

# How many live (registered, unfenced) brokers the broker on port $1 knows of: a Metadata v4
# request for no topics (v4 is the oldest Kafka 4.x accepts, KIP-896). Prints the count.
#   request:  api_key=3 | api_version=4 | correlation_id=1 | client_id=-1 | topics=[] | allow_auto_topic_creation=0
#   response: size(4) | correlation_id=1 (4) | throttle_time_ms (4) | brokers count (4) | ...
metadata_broker_count() {
  local hex
  hex="$(kafka_request_hex "$1" 0003000400000001ffff0000000000 16)" || return 1
  [[ "$hex" =~ ^[0-9a-f]{8}00000001[0-9a-f]{8}([0-9a-f]{8})$ ]] || return 1
  printf '%d\n' "$((16#${BASH_REMATCH[1]}))"
}
