import type { Loadgen } from '@wirestream/loadgen';
import { readCpuMs, readCpuTimesOf, readMemAvailableMb, readRssBytes, type PhaseMark, type TimelineSample } from '@wirestream/bench-kit';
import { fetchMemory, type ServerHandle } from './servers.js';

/** One point of the timeline, every `intervalMs` (what the chart draws, and the clients' memory). */
export interface Sample extends TimelineSample {
  /** RSS of all load workers together, and of the largest one, MB (as the workers last reported it). */
  readonly clientRssMb: number;
  readonly clientMaxWorkerRssMb: number;
  /** MemAvailable of the machine, MB (all tenants): what is left of the shared RAM. */
  readonly machineAvailableMb: number | undefined;
}

export interface Sampler {
  readonly samples: Sample[];
  readonly phases: PhaseMark[];
  /** Seconds since start. */
  elapsed(): number;
  mark(name: string): void;
  /** Attach the load client once it exists (deliveries and its CPU). */
  attach(loadgen: Loadgen): void;
  stop(): void;
}

/**
 * Samples RSS (from /proc, always on time) and the V8 heap (from `/debug/memory`, skipped while a
 * request is still in flight: a saturated server answers late, and the gap is itself the news).
 */
export function startSampler(server: ServerHandle, intervalMs = 250): Sampler {
  const startedMs = performance.now();
  const samples: Sample[] = [];
  const phases: PhaseMark[] = [];
  let loadgen: Loadgen | undefined;
  let heap: { used: number; total: number; atMs: number } | undefined;
  let heapInFlight = false;
  let lastCpuMs = readCpuMs(server.process.pid) ?? 0;
  let lastClientCpuMs = 0;
  let lastUnique = 0;
  let lastMs = startedMs;

  const timer = setInterval(() => {
    const nowMs = performance.now();
    const dtMs = nowMs - lastMs;
    lastMs = nowMs;
    if (!heapInFlight) {
      heapInFlight = true;
      void fetchMemory(server, false, 5_000).then((m) => {
        heapInFlight = false;
        if (m) heap = { used: m.heapUsed, total: m.heapTotal, atMs: performance.now() };
      });
    }
    const cpuMs = readCpuMs(server.process.pid);
    const serverCpuPct = cpuMs === undefined ? 0 : ((cpuMs - lastCpuMs) / dtMs) * 100;
    if (cpuMs !== undefined) lastCpuMs = cpuMs;
    let clientCpuPct = 0;
    let deliveriesPerSec = 0;
    let clientRssMb = 0;
    let clientMaxWorkerRssMb = 0;
    if (loadgen) {
      const p = loadgen.progress();
      for (const rss of p.workerRssBytes) {
        clientRssMb += rss / 1_048_576;
        clientMaxWorkerRssMb = Math.max(clientMaxWorkerRssMb, rss / 1_048_576);
      }
      const cpu = readCpuTimesOf(loadgen.pids);
      const clientCpuMs = cpu.userMs + cpu.systemMs;
      clientCpuPct = ((clientCpuMs - lastClientCpuMs) / dtMs) * 100;
      // Worker counters arrive every 250 ms too: a rate over one interval jitters, the chart shows it as is.
      deliveriesPerSec = ((p.unique - lastUnique) * 1_000) / dtMs;
      lastClientCpuMs = clientCpuMs;
      lastUnique = p.unique;
    }
    const rss = readRssBytes(server.process.pid);
    // A heap reading older than two intervals is not shown as current.
    const freshHeap = heap && nowMs - heap.atMs < 2 * intervalMs ? heap : undefined;
    samples.push({
      t: (nowMs - startedMs) / 1_000,
      rssMb: rss === undefined ? undefined : rss / 1_048_576,
      heapUsedMb: freshHeap ? freshHeap.used / 1_048_576 : undefined,
      heapTotalMb: freshHeap ? freshHeap.total / 1_048_576 : undefined,
      serverCpuPct,
      clientCpuPct,
      deliveriesPerSec,
      clientRssMb,
      clientMaxWorkerRssMb,
      machineAvailableMb: readMemAvailableMb(),
    });
  }, intervalMs);

  return {
    samples,
    phases,
    elapsed: () => (performance.now() - startedMs) / 1_000,
    mark(name) {
      phases.push({ name, t: (performance.now() - startedMs) / 1_000 });
    },
    attach(l) {
      loadgen = l;
      const cpu = readCpuTimesOf(l.pids);
      lastClientCpuMs = cpu.userMs + cpu.systemMs;
      lastUnique = l.progress().unique;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
