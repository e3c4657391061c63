#!/usr/bin/env bash
# Shared set-up for the two README commands: everything a fresh Debian machine with any Node.js (the
# system's Node 20 is enough: it only fetches Node 24), Java 17 and Maven needs. Idempotent and quiet
# when there is nothing to do.
#   source scripts/bootstrap.sh   (defines bootstrap; run from the repo root)
set -euo pipefail

PNPM_VERSION="12.4.2" # keep in sync with package.json#packageManager
# Node.js 24 LTS, from the npm registry's platform package (node-linux-<arch>; no install script).
# One Node major for set-up, package.json#engines, the images and the manifests: tests/infra checks it.
NODE_VERSION="24.22.3"

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# Puts Node.js 24 first on PATH for this shell (the project's scripts only; the system's node stays
# as it is). A machine without Node 24 gets NODE_VERSION from the npm registry into
# .wirestream/node/ (ignored by git), fetched once with whatever npm the machine has.
use_node24() {
  local root=$1 arch dir
  if [[ "$(node --version 2>/dev/null)" != v24.* ]]; then
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) echo "no Node.js 24 package for $(uname -m): install Node.js 24 and run again" >&2; return 1 ;;
    esac
    dir="$root/.wirestream/node/node-linux-${arch}-${NODE_VERSION}"
    if [[ ! -x "$dir/bin/node" ]]; then
      command -v npm >/dev/null || { echo "npm is required once, to fetch Node.js ${NODE_VERSION} (apt-get install nodejs npm)" >&2; return 1; }
      step "fetching Node.js ${NODE_VERSION} (npm package node-linux-${arch}, into .wirestream/node)"
      local tmp
      mkdir -p "$root/.wirestream/node"
      tmp="$(mktemp -d "$root/.wirestream/node/fetch.XXXXXX")"
      # npm pack checks the tarball against the registry's integrity hash.
      (cd "$tmp" && npm pack --silent "node-linux-${arch}@${NODE_VERSION}" >/dev/null && tar -xzf "node-linux-${arch}-${NODE_VERSION}.tgz")
      rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp"
    fi
    export PATH="$dir/bin:$PATH"
  fi
  step "Node.js $(node --version) ($(command -v node))"
}

bootstrap() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cd "$root"

  use_node24 "$root"

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

  # uWebSockets.js for this Node ABI must load as the native addon. Upstream's binaries need glibc
  # 2.38 for three C23 aliases only; on an older glibc (Debian 12: 2.36) scripts/uws-native.mjs builds
  # a three-symbol shim with gcc and points the binary at it with Debian's patchelf (decision 0034).
  # It checks, patches only when needed, and prints what loaded.
  local glibc
  glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
  if [[ -n "$glibc" && "$(printf '%s\n' 2.38 "$glibc" | sort -V | head -1)" != 2.38 ]] && ! command -v patchelf >/dev/null; then
    step "installing patchelf (Debian package; glibc ${glibc} needs the uWebSockets.js shim)"
    if [[ $(id -u) -eq 0 ]]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >/dev/null
    fi
  fi
  node scripts/uws-native.mjs

  step "fetching the Kafka broker from Maven Central (cached after the first run)"
  bash infra/kafka/fetch.sh

  step "building (turbo)"
  turbo run build --output-logs=errors-only
}
