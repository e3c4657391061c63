#!/usr/bin/env bash
# Shared set-up for the two README commands: everything a fresh Debian machine with Node.js 20,
# Java 17 and Maven needs. Idempotent and quiet when there is nothing to do.
#   source scripts/bootstrap.sh   (defines bootstrap; run from the repo root)
set -euo pipefail

PNPM_VERSION="12.4.2" # keep in sync with package.json#packageManager

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

bootstrap() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cd "$root"

  command -v node >/dev/null || { echo "Node.js 20 is required (https://nodejs.org)" >&2; exit 1; }

  if ! command -v redis-server >/dev/null; then
    step "installing redis-server (Debian package)"
    if [[ $(id -u) -eq 0 ]]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    fi
  fi

  if ! command -v kubectl >/dev/null; then
    # tests/infra renders infra/k8s with `kubectl kustomize`. Only when missing: an image's own
    # kubectl package owns /usr/bin/kubectl and would conflict.
    step "installing kubectl (Debian package kubernetes-client)"
    if [[ $(id -u) -eq 0 ]]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null
    fi
  fi

  if ! command -v chromium >/dev/null; then
    # tests/console drives Debian's chromium with playwright-core: the browser comes from apt,
    # never from a download of its own.
    step "installing chromium (Debian package, for the console's browser test)"
    if [[ $(id -u) -eq 0 ]]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
  fi

  step "installing dependencies (pnpm ${PNPM_VERSION}, frozen lockfile)"
  if [[ -x node_modules/.bin/pnpm ]] && [[ "$(node_modules/.bin/pnpm --version)" == "$PNPM_VERSION" ]]; then
    node_modules/.bin/pnpm install --frozen-lockfile --reporter=silent
  else
    npx --yes "pnpm@${PNPM_VERSION}" install --frozen-lockfile --reporter=silent
  fi
  # turbo looks pnpm up on PATH; the pinned devDependency provides it.
  export PATH="$root/node_modules/.bin:$PATH"

  step "fetching the Kafka broker from Maven Central (cached after the first run)"
  bash infra/kafka/fetch.sh

  step "building (turbo)"
  turbo run build --output-logs=errors-only
}
