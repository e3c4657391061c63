/**
 * V8 CPU profiles (`.cpuprofile`, as `node --cpu-prof` writes them): self time per call-tree node,
 * each node's frame and parent, and a frame's label. The benches summarize them their own way
 * (top functions; ingest's categories) on top of this one reader.
 */
import { readFileSync } from 'node:fs';

export interface ProfileFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: ProfileFrame;
  readonly children?: readonly number[];
}

interface CpuProfileFile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface CpuProfile {
  /** Self time in µs per node id: a sample lasts until the next one (Chrome DevTools' convention). */
  readonly selfUs: ReadonlyMap<number, number>;
  readonly frameOf: (id: number) => ProfileFrame | undefined;
  readonly parentOf: (id: number) => number | undefined;
}

export function readCpuProfile(path: string): CpuProfile {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfileFile;
  const frames = new Map<number, ProfileFrame>();
  const parents = new Map<number, number>();
  for (const node of profile.nodes) {
    frames.set(node.id, node.callFrame);
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  const times = profile.timeDeltas.map((d) => (t += d));
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    const next = i + 1 < times.length ? (times[i + 1] as number) : profile.endTime;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, next - (times[i] as number)));
  }
  return { selfUs, frameOf: (id) => frames.get(id), parentOf: (id) => parents.get(id) };
}

/** `fn kafkajs/src/x.js:12` (the url from its package, `…/node_modules/` or the repo's top folder, on), or `fn` without a url. */
export function frameLabel({ functionName, url, lineNumber }: ProfileFrame): string {
  return `${functionName || '(anonymous)'}${url ? ` ${shortUrl(url)}:${lineNumber + 1}` : ''}`;
}

/** `file:///…/node_modules/.pnpm/kafkajs@2.2.4/node_modules/kafkajs/src/x.js` → `kafkajs/src/x.js`. */
function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const m = /\/(apps|packages|bench|\.wirestream)\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}
