#!/usr/bin/env bash
# Makes a throwaway certificate set for tests (PEM, openssl only): a CA, a server certificate
# signed by it for 127.0.0.1/localhost, a client certificate signed by it (mTLS), and a second,
# "untrusted" CA with a client certificate of the same name, for negative tests. Keys are EC
# P-256, unencrypted (the files live in a test's data dir and die with it).
#
# Usage: infra/tls/make-certs.sh --out DIR [--client-cn NAME] [--days N]
#   --out        where the files go (created)              required
#   --client-cn  the client certificate's CN, which a      default app
#                server may map to a principal/user
#   --days       validity                                   default 30
# Files: ca.pem ca.key  server.pem server.key  client.pem client.key
#        untrusted-ca.pem untrusted-ca.key  untrusted-client.pem untrusted-client.key
#
# Idempotent: when DIR/ca.pem exists, nothing is made (a restarted server keeps its certificates,
# and clients holding the old CA still connect). Used by infra/kafka/start.sh --security and by
# @wirestream/testkit's startRedis({ tls }).
set -euo pipefail

out=""
client_cn="app"
days=30

die() { echo "make-certs.sh: $*" >&2; exit 2; }
need_value() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) need_value "$@"; out="$2"; shift 2 ;;
    --client-cn) need_value "$@"; client_cn="$2"; shift 2 ;;
    --days) need_value "$@"; days="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n "$out" ]] || die "--out is required"
[[ "$days" =~ ^[0-9]+$ ]] || die "--days must be a whole number, got '$days'"
[[ "$client_cn" =~ ^[A-Za-z0-9._-]+$ ]] || die "--client-cn must be letters, digits, '.', '_' or '-', got '$client_cn'"
command -v openssl >/dev/null || { echo "make-certs.sh: openssl not found (apt-get install -y openssl)" >&2; exit 1; }

mkdir -p "$out"
[[ -f "$out/ca.pem" ]] && exit 0
tmp="$(mktemp -d "$out/.make-certs.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# new_ca NAME CN: a self-signed CA allowed to sign leaf certificates only.
new_ca() {
  new_key "$tmp/$1.key"
  openssl req -x509 -new -key "$tmp/$1.key" -sha256 -days "$days" -subj "/O=Wirestream tests/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$tmp/$1.pem" 2>/dev/null
}

# new_leaf NAME CA CN EXTENSIONS: a key and a certificate signed by CA.
new_leaf() {
  local name="$1" ca="$2" cn="$3" ext="$4"
  new_key "$tmp/$name.key"
  openssl req -new -key "$tmp/$name.key" -subj "/O=Wirestream tests/CN=$cn" -out "$tmp/$name.csr" 2>/dev/null
  printf '%b\n' "$ext" >"$tmp/$name.ext"
  openssl x509 -req -in "$tmp/$name.csr" -CA "$tmp/$ca.pem" -CAkey "$tmp/$ca.key" -CAcreateserial \
    -sha256 -days "$days" -extfile "$tmp/$name.ext" -out "$tmp/$name.pem" 2>/dev/null
  rm -f "$tmp/$name.csr" "$tmp/$name.ext"
}

leaf_ext='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment'
new_ca ca "Wirestream test CA"
new_ca untrusted-ca "Untrusted test CA"
# Clients check the server's name against its SAN: both spellings of loopback.
new_leaf server ca localhost "$leaf_ext\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1"
new_leaf client ca "$client_cn" "$leaf_ext\nextendedKeyUsage=clientAuth"
new_leaf untrusted-client untrusted-ca "$client_cn" "$leaf_ext\nextendedKeyUsage=clientAuth"
rm -f "$tmp"/*.srl
chmod 600 "$tmp"/*.key
# ca.pem last: its presence is what marks the set complete.
for f in "$tmp"/*; do [[ "$f" == */ca.pem ]] || mv "$f" "$out/"; done
mv "$tmp/ca.pem" "$out/ca.pem"
