import { defineConfig } from 'vitest/config';

// Fault tests: the built apps run as processes against a real Kafka broker and redis-server while
// a fault is injected mid-stream; each test counts what clients received by Kafka position.
export default defineConfig({
  test: {
    name: 'faults',
    globalSetup: ['./src/global-setup.ts'],
    // One fault at a time: they kill and restart processes and servers, and the machine has 2 cores.
    fileParallelism: false,
    sequence: { groupOrder: 1 }, // alone, one file at a time, after every other project's files
    testTimeout: 120_000, // 2 minutes: the budget per test
    hookTimeout: 120_000, // 2 minutes: a file may start its own broker
  },
});
