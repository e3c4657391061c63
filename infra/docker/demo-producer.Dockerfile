# syntax=docker/dockerfile:1
# Demo producer image: realistic camelCase auction events into Kafka (laptop compose, demos).
#
#   docker build -f infra/docker/demo-producer.Dockerfile -t wirestream/demo-producer .
#
# Stages as in gateway.Dockerfile (pruner → installer → runtime); the pruner and installer stages
# are identical in all three Dockerfiles (only APP differs) and tests/infra runs them for real.
# The image also holds the terminal client: `node apps/demo/dist/watch.js --url ws://…/graphql`.

# Node.js 24 LTS on Debian 13 (trixie, glibc 2.41): upstream uWebSockets.js binaries load unmodified
# (they need glibc >= 2.38; decision 0034). One base for all three images; the set-up, engines and
# the manifests name the same major (tests/infra checks it).
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS base
# Same versions as the root package.json devDependencies (tests/infra checks that they agree).
RUN npm install --global --no-fund --no-audit pnpm@12.4.2 turbo@2.11.11
ENV TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

FROM base AS pruner
ARG APP=@wirestream/demo
WORKDIR /repo
COPY . .
RUN turbo prune "${APP}" --docker --out-dir pruned

FROM base AS installer
ARG APP=@wirestream/demo
WORKDIR /repo
# Manifests and lockfile first: this layer is reused until a package.json or the lockfile changes.
COPY --from=pruner /repo/pruned/json/ ./
RUN --mount=type=cache,id=pnpm-store,target=/root/.local/share/pnpm/store pnpm install --frozen-lockfile
COPY --from=pruner /repo/pruned/full/ ./
# Belongs to no package, so turbo prune leaves it out; every tsconfig extends it.
COPY tsconfig.base.json ./
# Turborepo's cache as a BuildKit cache mount: a package built for one image (or an earlier build)
# is restored, not compiled again; outputs are keyed by the package's inputs, so nothing stale is used.
RUN --mount=type=cache,id=turbo,target=/repo/.turbo/cache turbo run build --filter="${APP}"
RUN --mount=type=cache,id=pnpm-store,target=/root/.local/share/pnpm/store pnpm --filter="${APP}" deploy --prod deploy
# uWebSockets.js ships prebuilt binaries for every platform and Node ABI (~120 MB); keep the one
# this image's Node loads (glibc, linux-<arch>, ABI of Node 24). A no-op for apps without it.
RUN find deploy/node_modules/.pnpm -path '*/uwebsockets.js/uws_*.node' ! -name "uws_linux_$(node -p process.arch)_$(node -p process.versions.modules).node" -delete

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root, read-only for the app user: the process cannot change its own code.
COPY --from=installer /repo/deploy/package.json ./apps/demo/
COPY --from=installer /repo/deploy/dist ./apps/demo/dist
COPY --from=installer /repo/deploy/node_modules ./apps/demo/node_modules
# The base image's `node` user; numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
# A client, not a server: no port, no health check. It stops on SIGTERM after the current batch.
STOPSIGNAL SIGTERM
CMD ["node", "apps/demo/dist/producer.js"]
