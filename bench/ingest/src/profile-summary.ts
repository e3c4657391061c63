import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  readonly name: string;
  readonly ms: number;
  /** Share of the busy (non-idle) time. */
  readonly pct: number;
}

export interface ProfileSummary {
  readonly busyMs: number;
  readonly idleMs: number;
  readonly categories: readonly ProfileRow[];
  readonly top: readonly (ProfileRow & { readonly category: string })[];
}

/** Categories in the order the report prints them. */
export const CATEGORIES = [
  'kafkajs (fetch, decode, protocol)',
  'JSON.parse',
  'transform (snake_case keys)',
  'JSON.stringify (payload)',
  'envelope + channel (schema)',
  'ioredis (pipeline, encode, replies)',
  'ingest loop (app / bench loop code)',
  'node core (net, streams, buffers, timers)',
  'startup (module loading)',
  'garbage collector',
  '(program): V8/native, unattributed',
  'other',
] as const;
type Category = (typeof CATEGORIES)[number];

/**
 * Self time per function and per category of a `.cpuprofile` written by `node --cpu-prof`.
 * Node core and native frames (Buffer.concat, socket writes, utf8 encoding...) are charged to the
 * library that called them (kafkajs, ioredis, ...); only those reached straight from the event loop
 * (socket reads, timers, promise jobs) stay 'node core'. JSON.parse/stringify only show up as their own frames when the
 * process ran with BENCH_WRAP_JSON=1 (see child-hooks.ts); otherwise they are in their caller.
 */
export function summarizeCpuProfile(path: string, top = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }

  // Sample i lasts until sample i+1 (the Chrome DevTools convention).
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  const times = profile.timeDeltas.map((d) => (t += d));
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    const next = i + 1 < times.length ? (times[i + 1] as number) : profile.endTime;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, next - (times[i] as number)));
  }

  const categoryCache = new Map<number, Category | 'idle'>();
  const categoryOf = (id: number): Category | 'idle' => {
    const cached = categoryCache.get(id);
    if (cached !== undefined) return cached;
    const node = byId.get(id);
    let category: Category | 'idle';
    if (node === undefined) category = 'other';
    else {
      const { functionName, url } = node.callFrame;
      if (functionName === '(idle)') category = 'idle';
      else if (functionName === '(garbage collector)') category = 'garbage collector';
      else if (functionName === '(program)') category = '(program): V8/native, unattributed';
      else if (functionName === 'jsonParse' && url.includes('child-hooks')) category = 'JSON.parse';
      else if (functionName === 'jsonStringify' && url.includes('child-hooks')) {
        // encodeEnvelope stringifies the topic and key: small strings, but they belong to the envelope.
        const parent = parentOf.get(id);
        category = parent !== undefined && categoryOf(parent) === 'envelope + channel (schema)' ? 'envelope + channel (schema)' : 'JSON.stringify (payload)';
      } else if (url.includes('/kafkajs/')) category = 'kafkajs (fetch, decode, protocol)';
      else if (/\/(ioredis|@ioredis|redis-parser|redis-errors|denque|standard-as-callback|cluster-key-slot)\//.test(url)) category = 'ioredis (pipeline, encode, replies)';
      else if (url.includes('/packages/transform/')) category = 'transform (snake_case keys)';
      else if (url.includes('/packages/wire/') || url.includes('/packages/schema/')) category = 'envelope + channel (schema)';
      else if (/\/apps\/ingest\/|\/bench\/ingest\/|\/\.wirestream\/bench-ingest-/.test(url)) category = 'ingest loop (app / bench loop code)';
      else if (/^node:internal\/(modules|bootstrap|main)\//.test(url)) category = 'startup (module loading)';
      else if (url.startsWith('node:') || url === '') {
        // Buffer.concat, socket writes, utf8 encoding...: charged to the library that called them.
        const parent = parentOf.get(id);
        const inherited = parent === undefined ? 'idle' : categoryOf(parent);
        category = inherited === 'idle' || inherited === '(program): V8/native, unattributed' ? 'node core (net, streams, buffers, timers)' : inherited;
      } else category = 'other';
    }
    categoryCache.set(id, category);
    return category;
  };

  const categoryUs = new Map<string, number>();
  const functionUs = new Map<string, { us: number; category: string }>();
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const category = categoryOf(id);
    if (category === 'idle') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    categoryUs.set(category, (categoryUs.get(category) ?? 0) + us);
    const frame = byId.get(id)?.callFrame;
    const key = frame === undefined ? '?' : `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    const entry = functionUs.get(key) ?? { us: 0, category };
    entry.us += us;
    functionUs.set(key, entry);
  }
  const row = (name: string, us: number): ProfileRow => ({ name, ms: us / 1000, pct: busyUs > 0 ? (us / busyUs) * 100 : 0 });
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    categories: CATEGORIES.map((name) => row(name, categoryUs.get(name) ?? 0)),
    top: [...functionUs]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([name, { us, category }]) => ({ ...row(name, us), category })),
  };
}

/** `file:///…/node_modules/.pnpm/kafkajs@2.2.4/node_modules/kafkajs/src/x.js` → `kafkajs/src/x.js`. */
function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const m = /\/(apps|packages|bench|\.wirestream)\/(.*)$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}
