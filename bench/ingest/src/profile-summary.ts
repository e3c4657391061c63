import { frameLabel, readCpuProfile } from '@wirestream/bench-kit';

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
  const { selfUs, frameOf, parentOf: parentOfId } = readCpuProfile(path);

  const categoryCache = new Map<number, Category | 'idle'>();
  const categoryOf = (id: number): Category | 'idle' => {
    const cached = categoryCache.get(id);
    if (cached !== undefined) return cached;
    const frame = frameOf(id);
    let category: Category | 'idle';
    if (frame === undefined) category = 'other';
    else {
      const { functionName, url } = frame;
      if (functionName === '(idle)') category = 'idle';
      else if (functionName === '(garbage collector)') category = 'garbage collector';
      else if (functionName === '(program)') category = '(program): V8/native, unattributed';
      else if (functionName === 'jsonParse' && url.includes('child-hooks')) category = 'JSON.parse';
      else if (functionName === 'jsonStringify' && url.includes('child-hooks')) {
        // encodeEnvelope stringifies the topic and key: small strings, but they belong to the envelope.
        const parent = parentOfId(id);
        category = parent !== undefined && categoryOf(parent) === 'envelope + channel (schema)' ? 'envelope + channel (schema)' : 'JSON.stringify (payload)';
      } else if (url.includes('/kafkajs/')) category = 'kafkajs (fetch, decode, protocol)';
      else if (/\/(ioredis|@ioredis|redis-parser|redis-errors|denque|standard-as-callback|cluster-key-slot)\//.test(url)) category = 'ioredis (pipeline, encode, replies)';
      else if (url.includes('/packages/transform/')) category = 'transform (snake_case keys)';
      else if (url.includes('/packages/wire/') || url.includes('/packages/schema/')) category = 'envelope + channel (schema)';
      else if (/\/apps\/ingest\/|\/bench\/ingest\/|\/\.wirestream\/bench-ingest-/.test(url)) category = 'ingest loop (app / bench loop code)';
      else if (/^node:internal\/(modules|bootstrap|main)\//.test(url)) category = 'startup (module loading)';
      else if (url.startsWith('node:') || url === '') {
        // Buffer.concat, socket writes, utf8 encoding...: charged to the library that called them.
        const parent = parentOfId(id);
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
    const frame = frameOf(id);
    const key = frame === undefined ? '?' : frameLabel(frame);
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
