import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'ingest',
    // Starts the shared Kafka broker before any test file (see ./global-setup.ts).
    globalSetup: ['./global-setup.ts'],
    // Every test waits with its own deadlines and takes a few seconds; this only stops a hang.
    testTimeout: 30_000, // 30 seconds
    hookTimeout: 60_000, // 60 seconds: beforeAll may start a redis-server or, without a shared broker, Kafka
  },
});
