import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One vitest process runs every workspace project so the test command prints one summary.
//
// Test files run three at a time even on two cores (vitest's default is cores − 1: one at a time
// here, which made the run the sum of every file). Most of a file's time is spent waiting on a Kafka
// broker, a redis-server or a built app it started, not on the CPU. Two full runs of the test command
// from fresh clones on the same busy machine (load 13-19): one at a time 2,271 s, three at once
// 1,225 s (docs/overview.md#tests). Projects whose
// files assert latency under faults (tests/faults, tests/topology: fileParallelism false) still run
// alone, one file at a time, after the rest.
export default defineConfig({
  test: {
    maxWorkers: Math.max(3, availableParallelism()),
    // bench/: the projects with tests of their own (the kit, the fan-out bench's units, the load client).
    projects: ['packages/*', 'apps/*', 'tests/*', 'bench/*/vitest.config.ts'],
  },
});
