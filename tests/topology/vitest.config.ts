import { defineConfig } from 'vitest/config';

// The topology test (issue #17): a Redis Cluster, a three-broker Kafka, two ingests and three
// gateways as real processes on one machine, five faults injected one after another into one
// stream, every client's deliveries counted by Kafka position.
export default defineConfig({
  test: {
    name: 'topology',
    // topology.test.ts is one stream whose faults are its tests, in order; nothing runs beside it
    // (the machine has 2 cores and it alone runs 3 JVMs, 6 redis-servers and 5 apps). The other
    // file checks its counting on hand-made data, in milliseconds.
    fileParallelism: false,
    sequence: { groupOrder: 2 }, // alone, one file at a time, after the faults
    testTimeout: 120_000, // 2 minutes: one fault until every client caught up (an ingest kill waits out a 30 s session)
    hookTimeout: 240_000, // 4 minutes: three JVMs and a Redis Cluster start on 2 shared cores
  },
});
