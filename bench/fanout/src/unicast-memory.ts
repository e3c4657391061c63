#!/usr/bin/env node
/**
 * Heap per distinct operation (issue 37), in one process: the real engine (`createHub` on the
 * in-process bus, a no-op writer) and the real compiler, in alternating rounds of two shapes:
 *   - `distinct`: N sockets, each following its own listing (`listingUpdated(listing_id: "lst-…")`,
 *     the key written in the document as partners write it): N operations, N groups;
 *   - `shared`:   N sockets on one operation: one group.
 * Each round builds a fresh compiler and hub, compiles and subscribes, and measures the heap after a
 * forced GC against the heap before it was built; what the compiler's caches hold counts (a gateway
 * holds them too), and so does each socket's connection object (an empty object here). Reported: bytes
 * per socket for each shape, and their difference: what a distinct operation costs beyond a socket.
 *
 *   node --expose-gc bench/fanout/dist/unicast-memory.js [--subscribers 10000] [--rounds 4] [--snapshot dir] [--as-sent]
 *
 * `--as-sent` keeps each document text its own cache entry (`normalizeLiterals: false`, literals.ts).
 *
 * `--snapshot dir` writes a heap snapshot of the last `distinct` round there (v8.writeHeapSnapshot),
 * for comparing constructors in DevTools.
 */
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { markdownTable, median, parseCli, positiveInts } from '@wirestream/bench-kit';
import { alternate, collectGarbage, compileSubscription, createCompiler, createFrameSink, listingKey, medianRange, runEngineBench, startEngine, type OperationCompiler } from './engine-fixture.js';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '4' },
    snapshot: { type: 'string' },
    'as-sent': { type: 'boolean', default: false },
  },
});
const { subscribers: SUBSCRIBERS, rounds: ROUNDS } = positiveInts(values, ['subscribers', 'rounds']);
const AS_SENT = values['as-sent'];
collectGarbage(); // fails now, not after the set-up, without --expose-gc

const SELECTION = '{ listing_id event_type occurred_at listing { title current_price { amount_cents } } }';
const { writer } = createFrameSink<object>();
const compileOne = (compiler: OperationCompiler, key: string) => compileSubscription(compiler, `subscription { listingUpdated(listing_id: "${key}") ${SELECTION} }`);

type Shape = 'distinct' | 'shared';

/** Heap bytes per socket that a built engine of this shape holds, after a forced GC (and what it built, to check). */
async function measure(shape: Shape, snapshotDir: string | undefined): Promise<{ perSocket: number; groups: number; cachedDocuments: number }> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const compiler = createCompiler({ normalizeLiterals: !AS_SENT });
  const conns: object[] = [];
  const { hub } = await startEngine<object>({
    writer,
    subscribe: (hub) => {
      const shared = shape === 'shared' ? compileOne(compiler, listingKey(0)) : undefined;
      for (let i = 0; i < SUBSCRIBERS; i++) {
        const conn = {};
        conns.push(conn);
        hub.subscribe(conn, '1', shared ?? compileOne(compiler, listingKey(i)));
      }
    },
  });
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  const { groups, subscribers } = hub.stats();
  if (subscribers !== SUBSCRIBERS || conns.length !== SUBSCRIBERS) throw new Error(`${shape}: ${subscribers} subscribers, expected ${SUBSCRIBERS}`);
  if (snapshotDir !== undefined) writeHeapSnapshot(join(snapshotDir, `unicast-memory-${shape}.heapsnapshot`));
  return { perSocket: (after - before) / SUBSCRIBERS, groups, cachedDocuments: compiler.cachedDocuments };
}

runEngineBench(async () => {
  const shapes: Shape[] = ['distinct', 'shared'];
  const seen = new Map<Shape, { groups: number; cachedDocuments: number }>();
  // The warm-up (round -1) builds code, shapes and the schema's caches; the last two rounds may write a snapshot.
  const { samples: bytes } = await alternate(shapes, ROUNDS, async (shape, r) => {
    const last = r >= 0 && (r === ROUNDS - 1 || r === ROUNDS - 2);
    const m = await measure(shape, last && shape === 'distinct' ? values.snapshot : undefined);
    if (r >= 0) seen.set(shape, m);
    return m.perSocket;
  });
  console.log(`heap per socket after GC: ${SUBSCRIBERS} sockets, ${ROUNDS} rounds each, alternating, literals ${AS_SENT ? 'kept as sent' : 'moved'} (node ${process.version})`);
  const rows = shapes.map((shape) => {
    const s = seen.get(shape);
    return [shape, String(s?.groups ?? 0), String(s?.cachedDocuments ?? 0), medianRange(bytes.get(shape) ?? [], (b) => b.toFixed(0))];
  });
  console.log(markdownTable([['shape', 'groups', 'cached documents', 'bytes per socket, median (min–max)'], ...rows]));
  const extra = median(bytes.get('distinct') ?? []) - median(bytes.get('shared') ?? []);
  console.log(`a distinct operation costs ${extra.toFixed(0)} bytes of heap beyond a socket that shares one`);
});
