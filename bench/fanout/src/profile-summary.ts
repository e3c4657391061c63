import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { frameLabel, readCpuProfile } from '@wirestream/bench-kit';

/** Top functions by self time of a V8 `.cpuprofile` (as `node --cpu-prof` writes), as text lines. */
export function summarizeProfile(path: string, top = 20): string[] {
  const { selfUs, frameOf } = readCpuProfile(path);
  const byLabel = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const frame = frameOf(id);
    if (!frame) continue;
    const key = frameLabel(frame);
    byLabel.set(key, (byLabel.get(key) ?? 0) + us);
    totalUs += us;
  }
  return [...byLabel]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => `${(us / 1_000).toFixed(0).padStart(7)} ms ${((100 * us) / totalUs).toFixed(1).padStart(5)} %  ${key}`)
    .concat(`total ${(totalUs / 1_000).toFixed(0)} ms sampled`);
}

/** Every profile in `dir`, newest last. */
export function profilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => join(dir, f));
}
