# The secured listeners of start.sh --security: their config, certificates, users and the
# clients.json that tells a client (and @wirestream/testkit) how to reach them. Sourced, not run.
# shellcheck shell=bash
#
# Listeners (all on 127.0.0.1):
#   PLAINTEXT       unchanged: inter-broker traffic, tests that need no security, and admin.
#                   Its principal is User:ANONYMOUS, a super user: whoever reaches this port may
#                   do anything, which is how tests grant ACLs. Never expose it beyond loopback.
#   CONTROLLER      unchanged (KRaft; ANONYMOUS too, so the broker may talk to its controller).
#   SASL_SSL        TLS (server certificate only) + SASL PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
#                   OAUTHBEARER with Kafka's unsecured JWS validator (alg "none": any token with a
#                   "sub" and a future "exp" passes; for tests only).
#   SSL             mutual TLS: ssl.client.auth=required; the principal is the certificate's CN
#                   (User:app for client.pem).
#   SASL_PLAINTEXT  SASL PLAIN/SCRAM without TLS (what a SASL client without ssl: true meets).
# Authorization: StandardAuthorizer, allow.everyone.if.no.acl.found=false, super users
# User:ANONYMOUS (PLAINTEXT, CONTROLLER) and User:admin. Every other principal needs ACLs.
#
# Users (throwaway, fixed so a person can type them):
#   admin / admin-secret  super user      PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
#   app   / app-secret    no ACLs at all  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
# PLAIN users live in the listener's JAAS config (user_<name>="<password>"); SCRAM users are
# written into the metadata log when the storage is formatted (kafka-storage format --add-scram),
# so they exist before the broker first starts.

# Keystore and truststore password: these stores hold throwaway test keys only.
SECURITY_STORE_PASSWORD="wirestream-test"
SECURITY_USERS=(admin app)
declare -A SECURITY_PASSWORDS=([admin]=admin-secret [app]=app-secret)
SECURITY_SUPER_USERS="User:ANONYMOUS;User:admin"

# Certificates in DIR: the PEM set from infra/tls/make-certs.sh (clients use ca.pem, client.pem,
# client.key) plus the broker's PKCS12 keystore and truststore. Kept across restarts.
security_make_files() {
  local dir="$1"
  command -v keytool >/dev/null || { echo "start.sh: keytool not found (it comes with the JDK: apt-get install -y openjdk-17-jre-headless)" >&2; return 1; }
  bash "$here/../tls/make-certs.sh" --out "$dir" --client-cn app || return 1
  [[ -f "$dir/truststore.p12" ]] && return 0
  openssl pkcs12 -export -name broker -in "$dir/server.pem" -inkey "$dir/server.key" -certfile "$dir/ca.pem" \
    -passout "pass:$SECURITY_STORE_PASSWORD" -out "$dir/broker.p12.tmp" || return 1
  mv "$dir/broker.p12.tmp" "$dir/broker.p12"
  # keytool, not openssl: Java ignores certificates in a PKCS12 file unless they carry its own
  # "trusted" attribute, which openssl 3.0 cannot write.
  rm -f "$dir/truststore.p12.tmp"
  keytool -importcert -noprompt -alias ca -file "$dir/ca.pem" -storetype PKCS12 \
    -keystore "$dir/truststore.p12.tmp" -storepass "$SECURITY_STORE_PASSWORD" >/dev/null 2>&1 \
    || { echo "start.sh: keytool could not write $dir/truststore.p12" >&2; return 1; }
  mv "$dir/truststore.p12.tmp" "$dir/truststore.p12"
}

# listeners, advertised.listeners and the protocol map. Args: PLAINTEXT CONTROLLER SASL_SSL SSL SASL_PLAINTEXT ports.
security_listener_props() {
  local h=127.0.0.1
  echo "listeners=PLAINTEXT://$h:$1,CONTROLLER://$h:$2,SASL_SSL://$h:$3,SSL://$h:$4,SASL_PLAINTEXT://$h:$5"
  echo "advertised.listeners=PLAINTEXT://$h:$1,SASL_SSL://$h:$3,SSL://$h:$4,SASL_PLAINTEXT://$h:$5"
  echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
}

# The rest of the broker config of the secured mode. Arg: the security dir.
security_props() {
  local dir="$1" plain_users="" user listener
  for user in "${SECURITY_USERS[@]}"; do plain_users+=" user_$user=\"${SECURITY_PASSWORDS[$user]}\""; done
  cat <<PROPS

# --- security (start.sh --security; see infra/kafka/security.sh) ---
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=$SECURITY_SUPER_USERS

# One keystore for every TLS listener; clients verify it with ca.pem (SAN 127.0.0.1, localhost).
ssl.keystore.type=PKCS12
ssl.keystore.location=$dir/broker.p12
ssl.keystore.password=$SECURITY_STORE_PASSWORD
ssl.key.password=$SECURITY_STORE_PASSWORD
ssl.truststore.type=PKCS12
ssl.truststore.location=$dir/truststore.p12
ssl.truststore.password=$SECURITY_STORE_PASSWORD
# mTLS only on the SSL listener; SASL_SSL authenticates by SASL over a server-authenticated TLS.
listener.name.ssl.ssl.client.auth=required
# "CN=app,O=Wirestream tests" -> User:app, so ACLs name the same user whatever the listener.
ssl.principal.mapping.rules=RULE:^CN=([^,]+)(,.*)?\$/\$1/,DEFAULT
PROPS
  for listener in sasl_ssl sasl_plaintext; do
    cat <<PROPS
listener.name.$listener.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.$listener.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$plain_users;
listener.name.$listener.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.$listener.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# No server callback handler: Kafka's default for OAUTHBEARER, OAuthBearerUnsecuredValidatorCallbackHandler.
listener.name.$listener.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";
PROPS
  done
}

# kafka-storage format arguments that create the SCRAM users, one a line.
security_scram_format_args() {
  local user mechanism
  for user in "${SECURITY_USERS[@]}"; do
    for mechanism in SCRAM-SHA-256 SCRAM-SHA-512; do
      printf -- '--add-scram\n%s=[name=%s,password=%s]\n' "$mechanism" "$user" "${SECURITY_PASSWORDS[$user]}"
    done
  done
}

# DIR/clients.json: every secured listener's address, the users and the PEM files, for clients
# and for @wirestream/testkit (startKafka({ security: true }) reads it). Args: DIR and the ports.
security_write_clients_json() {
  local dir="$1" h=127.0.0.1 users="" user sep=""
  for user in "${SECURITY_USERS[@]}"; do
    users+="$sep\"$user\": { \"username\": \"$user\", \"password\": \"${SECURITY_PASSWORDS[$user]}\" }"
    sep=", "
  done
  cat >"$dir/clients.json.tmp" <<JSON
{
  "listeners": {
    "plaintext": "$h:$2",
    "saslSsl": "$h:$3",
    "ssl": "$h:$4",
    "saslPlaintext": "$h:$5"
  },
  "saslMechanisms": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"],
  "superUsers": ["User:ANONYMOUS", "User:admin"],
  "users": { $users },
  "clientPrincipal": "User:app",
  "files": {
    "ca": "$dir/ca.pem",
    "clientCert": "$dir/client.pem",
    "clientKey": "$dir/client.key",
    "untrustedCa": "$dir/untrusted-ca.pem",
    "untrustedClientCert": "$dir/untrusted-client.pem",
    "untrustedClientKey": "$dir/untrusted-client.key"
  }
}
JSON
  mv "$dir/clients.json.tmp" "$dir/clients.json"
}
