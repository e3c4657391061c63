// Preloaded into an app by idle-rss.ts (`node --expose-gc --import <this> main.js`): on SIGUSR2 it
// writes the process's memory to $IDLE_RSS_REPORT as JSON: process.memoryUsage() and V8's heap
// spaces as they are, then again after two forced GCs. It changes nothing else in the process.
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';

/** What the report holds at one instant (a heap space by name: its size and what is used). */
export interface MemorySnapshot extends NodeJS.MemoryUsage {
  readonly spaces: Readonly<Record<string, { readonly size: number; readonly used: number }>>;
}

const out = process.env['IDLE_RSS_REPORT'];
if (out !== undefined) {
  const snapshot = (): MemorySnapshot => ({
    ...process.memoryUsage(),
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().filter((s) => s.space_size > 0).map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }])),
  });
  process.on('SIGUSR2', () => {
    const idle = snapshot();
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    writeFileSync(out, JSON.stringify({ idle, afterGc: snapshot() }));
  });
}
