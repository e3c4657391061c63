import { defineConfig } from 'vitest/config';

// The web console in a real browser (Debian's chromium, driven by playwright-core) against the
// built ingest and gateway as processes, a real Kafka broker and redis-server.
export default defineConfig({
  test: {
    name: 'console',
    globalSetup: ['./src/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
