import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'testkit',
    // A cold broker start is ~3 s here (2 cores); the kafkajs suite joins groups and waits on
    // rebalances, so per-test limits are generous but still bounded.
    testTimeout: 30_000, // 30 seconds
    hookTimeout: 90_000, // 90 seconds: beforeAll may fetch the broker jars (~5 s cold) and start it
  },
});
