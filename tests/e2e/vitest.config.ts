import { defineConfig } from 'vitest/config';

// End-to-end: the built apps run as processes against a real Kafka broker and redis-server.
export default defineConfig({
  test: {
    name: 'e2e',
    globalSetup: ['./src/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
