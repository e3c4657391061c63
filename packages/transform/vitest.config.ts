import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'transform',
    include: ['src/**/*.test.ts'],
    // Every test here is CPU-bound (corpora, generated inputs, a million conversions) and none waits
    // on time: ~1 s alone, past vitest's 5 s default when the test command loads both cores.
    testTimeout: 30_000, // 30 seconds
  },
});
