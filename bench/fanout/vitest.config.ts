import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'bench-fanout',
    // The unit tests here are CPU-bound and wait on nothing (filter-plans.test.ts compiles a thousand filtered
    // operations: ~4.9 s alone): past vitest's 5 s default when the test command loads both cores.
    testTimeout: 30_000, // 30 seconds
  },
});
