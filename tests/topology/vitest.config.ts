import { defineConfig } from 'vitest/config';

// The topology test (issue #17): a Redis Cluster, a three-broker Kafka, two ingests and three
// gateways as real processes on one machine, five faults injected one after another into one
// stream, every client's deliveries counted by Kafka position.
export default defineConfig({
  test: {
    name: 'topology',
    // One file, one stream: the faults are its tests and run in order. Nothing else in parallel
    // (the machine has 2 cores and this file alone runs 3 JVMs, 6 redis-servers and 5 apps).
    fileParallelism: false,
    testTimeout: 120_000, // 2 minutes: one fault until every client caught up (an ingest kill waits out a 30 s session)
    hookTimeout: 240_000, // 4 minutes: three JVMs and a Redis Cluster start on 2 shared cores
  },
});
