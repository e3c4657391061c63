#!/usr/bin/env bash
# The "run the product" command (README): set up, then start local Kafka + Redis (unless
# KAFKA_BROKERS / REDIS_URL point elsewhere), ingest, gateway and the demo producer.
# Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
bootstrap
step "starting Wirestream"
exec node scripts/run-product.mjs
