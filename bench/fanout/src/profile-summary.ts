import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number } }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Top functions by self time of a V8 `.cpuprofile` (as `node --cpu-prof` writes), as text lines. */
export function summarizeProfile(path: string, top = 20): string[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!frame) return;
    const where = frame.url ? ` ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'}${where}`;
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
    totalUs += dt;
  });
  return [...selfUs]
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
