import { defineConfig } from 'vitest/config';

// Images, compose and Kubernetes manifests: what can be checked without a Docker engine or a
// cluster. docker-build.test.ts installs and builds pruned workspaces for real (one test per app).
export default defineConfig({
  test: {
    name: 'infra',
    testTimeout: 60_000,
    hookTimeout: 120_000, // removing the build trees of docker-build.test.ts
  },
});
