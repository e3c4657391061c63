import { availableParallelism } from 'node:os';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The files that take longest, started first (longest first), then vitest's own order: projects one
 * after another, and within a project the slow and failed files of its cache first (a fresh clone,
 * as in CI, has no cache: larger files first). Without this, a long file waits for its project's turn:
 * on 2026-12-05 the image builds (docker-build.test.ts, 847 s under load) started 669 s into the run
 * and ended 75 s after every other file of the parallel phase; the files of that phase took 2,901 s
 * in all, 967 s on three workers. Durations from that run; a file that got faster only moves later.
 */
const SLOW_FIRST = [
  'tests/infra/src/docker-build.test.ts', // 847 s
  'tests/e2e/src/secured.e2e.test.ts', // 165 s
  'apps/gateway/test/fuzz.test.ts', // 162 s
  'apps/ingest/test/cluster.test.ts', // 150 s
  'tests/infra/src/redis-cluster-scripts.test.ts', // 101 s
  'packages/testkit/test/startKafka.test.ts', // 101 s
];

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = SLOW_FIRST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return at === -1 ? SLOW_FIRST.length : at;
    };
    // A stable sort by group first: groups keep their order (groupOrder is 0 for all but faults and topology).
    return sorted
      .map((spec, index) => ({ spec, index, group: spec.project.config.sequence.groupOrder, rank: rank(spec) }))
      .sort((a, b) => a.group - b.group || a.rank - b.rank || a.index - b.index)
      .map(({ spec }) => spec);
  }
}

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
    sequence: { sequencer: SlowFirstSequencer },
    // bench/: the projects with tests of their own (the kit, the fan-out bench's units, the load client).
    projects: ['packages/*', 'apps/*', 'tests/*', 'bench/*/vitest.config.ts'],
  },
});
