import v8 from 'node:v8';

/**
 * Bench harness shared by the transform benches: times a function over fresh inputs that the bench
 * prepares untimed (transforms consume their input), and measures bytes allocated per item from
 * heap deltas over batches during which no GC ran (V8's GCProfiler tells which).
 */
export interface Measurement {
  name: string;
  itemsPerSecond: number;
  nsPerItem: number;
  bytesPerItem: number;
}

export interface Candidate<I> {
  name: string;
  run: (input: I) => unknown;
}

export interface MeasureOptions<I> {
  /** Builds `count` fresh inputs (untimed): transforms consume their input. */
  prepare: (count: number) => I[];
  /** Timed work per candidate per round, in milliseconds. */
  roundTimeMs: number;
  /**
   * Candidates run round-robin this many times and each reports its median round, so that a burst
   * of load from other processes on the shared box hits every candidate alike.
   */
  rounds: number;
  /** Inputs prepared per timed batch: small enough to stay in the young generation, like ingest's. */
  batchSize?: number;
  onProgress?: (message: string) => void;
}

const gc = (globalThis as { gc?: () => void }).gc;

// Written, never read: a place the JIT cannot prove dead, so the measured work is kept.
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- see above
let sink: unknown;

/** Keeps results alive so the JIT cannot drop the work. */
export function consume(value: unknown): void {
  sink = value;
}

function allocationProbe(): number {
  return v8.getHeapStatistics().used_heap_size;
}

function timeRound<I>(candidate: Candidate<I>, prepare: (count: number) => I[], batchSize: number, timeMs: number): number {
  const { run } = candidate;
  let items = 0;
  let elapsedNs = 0n;
  const budgetNs = BigInt(Math.round(timeMs * 1e6));
  while (elapsedNs < budgetNs) {
    const inputs = prepare(batchSize);
    const start = process.hrtime.bigint();
    // Deliberately imperative: the loop overhead is part of every candidate's number.
    for (let i = 0; i < inputs.length; i++) sink = run(inputs[i] as I);
    elapsedNs += process.hrtime.bigint() - start;
    items += inputs.length;
  }
  return Number(elapsedNs) / items;
}

export function measureAll<I>(candidates: readonly Candidate<I>[], options: MeasureOptions<I>): Measurement[] {
  const { prepare, roundTimeMs, rounds, batchSize = 256, onProgress } = options;
  // Warm up: let the JIT optimize every candidate before anything counts.
  for (const candidate of candidates) {
    onProgress?.(`warm-up ${candidate.name}`);
    timeRound(candidate, prepare, batchSize, Math.max(100, roundTimeMs / 2));
  }
  const samples = candidates.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    onProgress?.(`round ${round + 1}/${rounds}`);
    candidates.forEach((candidate, c) => samples[c]?.push(timeRound(candidate, prepare, batchSize, roundTimeMs)));
  }
  return candidates.map((candidate, c) => {
    const nsPerItem = median(samples[c] ?? []);
    onProgress?.(`allocations ${candidate.name}`);
    return {
      name: candidate.name,
      itemsPerSecond: 1e9 / nsPerItem,
      nsPerItem,
      bytesPerItem: bytesAllocatedPerItem(prepare, candidate.run),
    };
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** What one probed batch allocates by itself (profiler, statistics objects), by batch size. */
const probeOverhead = new Map<number, number>();

/**
 * Median heap growth per item over batches during which no GC ran (V8's GCProfiler tells which),
 * minus what the probe itself allocates (measured with a no-op at the same batch size).
 */
function bytesAllocatedPerItem<I>(prepare: (count: number) => I[], run: (input: I) => unknown): number {
  if (gc === undefined) return Number.NaN;
  for (let batch = 16; batch >= 1; batch = Math.floor(batch / 2)) {
    const deltas = batchDeltas(prepare, run, batch);
    if (deltas.length < 9) continue;
    let overhead = probeOverhead.get(batch);
    if (overhead === undefined) {
      overhead = median(batchDeltas((n) => new Array<undefined>(n).fill(undefined), () => undefined, batch));
      probeOverhead.set(batch, overhead);
    }
    return Math.max(0, (median(deltas) - overhead) / batch);
  }
  return Number.NaN;
}

/** Heap deltas of up to 15 GC-free batches of `batch` items. */
function batchDeltas<I>(prepare: (count: number) => I[], run: (input: I) => unknown, batch: number): number[] {
  const deltas: number[] = [];
  const keep: unknown[] = new Array(batch);
  for (let tries = 0; deltas.length < 15 && tries < 60; tries++) {
    const inputs = prepare(batch);
    (gc as () => void)();
    const profiler = new v8.GCProfiler();
    profiler.start();
    const before = allocationProbe();
    for (let i = 0; i < inputs.length; i++) keep[i] = run(inputs[i] as I);
    const after = allocationProbe();
    if (profiler.stop().statistics.length === 0) deltas.push(after - before);
  }
  consume(keep);
  return deltas;
}

export function formatTable(rows: readonly Measurement[], baseline: Measurement, itemLabel: string): string {
  const header = `| candidate | ${itemLabel}/s | ns/${itemLabel} | bytes allocated/${itemLabel} | speed vs baseline | bytes vs baseline |`;
  const line = '|---|---:|---:|---:|---:|---:|';
  const fmt = (n: number, digits = 0): string =>
    Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';
  const body = rows.map((r) =>
    `| ${r.name} | ${fmt(r.itemsPerSecond)} | ${fmt(r.nsPerItem)} | ${fmt(r.bytesPerItem)} | ` +
      `${fmt(r.itemsPerSecond / baseline.itemsPerSecond, 1)}× | ${fmt(r.bytesPerItem / baseline.bytesPerItem, 2)}× |`,
  );
  return [header, line, ...body].join('\n');
}
