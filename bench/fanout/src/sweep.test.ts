import { describe, expect, it } from 'vitest';
import type { StackRun } from './run-stack.js';
import type { StackName } from './servers.js';
import { againstBare, sweepFigures, sweepSection, usPerExtraOp, type SweepOptions, type SweepRun } from './sweep.js';

/** A sweep run with only what the figures read (the rest of a StackRun is not looked at). */
function fake(stack: StackName, distinct: number, repeat: number, cpuMsPerEvent: number, delivered = 1_000): SweepRun {
  const run = { unique: delivered, expected: 1_000, duplicates: 0, deliveriesPerSec: 1_000, executions: distinct * 10, latencyMs: { p99: 1 }, serverCpuMs: cpuMsPerEvent * 10, othersCpuPct: 0 };
  return { stack, sockets: 2_000, distinct, repeat, cpuMsPerEvent, run: run as unknown as StackRun };
}

const options: SweepOptions = { stacks: ['ours', 'bare-projecting'], sockets: [2_000], distinct: [1, 100, 1_000], events: 10, repeat: 2, filterKeys: [], drainTimeoutMs: 1, workers: undefined };

describe('sweep figures', () => {
  it('µs per extra operation is the CPU per event it adds over one operation, per operation', () => {
    expect(usPerExtraOp(5, 35, 1_000)).toBeCloseTo(30.03, 2);
    expect(usPerExtraOp(5, 10.94, 100)).toBeCloseTo(60, 5);
  });

  it("scales our ratio to bare by the issue's bare figure (4.6 µs) against the 8 µs target", () => {
    expect(againstBare(30, 20)).toEqual({ ratio: 1.5, scaledUs: expect.closeTo(6.9, 5) as number, met: true });
    expect(againstBare(40, 20).met).toBe(false);
  });

  it('takes the median CPU per count over repetitions (two: their mean) before the difference, and flags incomplete runs', () => {
    const runs = [fake('ours', 1, 1, 4), fake('ours', 1, 2, 6), fake('ours', 1_000, 1, 34), fake('ours', 1_000, 2, 36, 999)];
    const f = sweepFigures(runs, 'ours', 2_000, [1, 1_000]);
    expect(f.cpuMsPerEvent.get(1)).toBe(5);
    expect(f.cpuMsPerEvent.get(1_000)).toBe(35);
    expect(f.usPerExtraOp.get(1_000)).toBeCloseTo(30.03, 2);
    expect(f.complete.get(1)).toBe(true);
    expect(f.complete.get(1_000)).toBe(false);
  });

  it('reports ours ÷ bare per count, per repetition, and the scaled figure', () => {
    const runs = [1, 2].flatMap((rep) => [
      fake('ours', 1, rep, 5),
      fake('bare-projecting', 1, rep, 9),
      fake('ours', 100, rep, 5 + 0.099 * rep * 30),
      fake('bare-projecting', 100, rep, 9 + 0.099 * 20),
      fake('ours', 1_000, rep, 5 + 0.999 * 30),
      fake('bare-projecting', 1_000, rep, 9 + 0.999 * 20),
    ]);
    const { markdown } = sweepSection(runs, options, 'x.svg');
    expect(markdown).toContain('1 → 1,000 operations: ours 30.0 µs per extra operation per event, bare projecting 20.0 µs: **1.50× bare** (per repetition: 1.50 / 1.50)');
    expect(markdown).toContain('= **6.9 µs** vs the ≤ 8 µs target **met**');
    expect(markdown).toContain('1 → 100 operations: ours 45.0 µs per extra operation per event, bare projecting 20.0 µs: **2.25× bare** (per repetition: 1.50 / 3.00)');
  });
});
