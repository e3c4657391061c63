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
 */
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import { markdownTable, median } from '@wirestream/bench-kit';
import { alternate, collectGarbage, compileSubscription, createCompiler, createFrameSink, medianRange, startEngine, unicastQuery } from './engine-fixture.js';
import { countOption, type MicroBench } from './scenario.js';


type Shape = 'distinct' | 'shared';

export const unicastMemory: MicroBench = {
  description: 'heap per socket after GC, N sockets on N distinct operations vs on one (issue 37)',
  nodeFlags: '--expose-gc',
  options: {
    subscribers: countOption(10_000, 'sockets of each shape'),
    rounds: countOption(4, 'rounds per shape after a warm-up'),
    snapshot: { arg: 'DIR', help: 'write a heap snapshot of the last `distinct` round there (v8.writeHeapSnapshot), for comparing constructors in DevTools' },
    'as-sent': { help: 'keep each document text its own cache entry (`normalizeLiterals: false`, literals.ts)' },
  },
  async run(o) {
    const [subscribers, rounds, asSent, snapshot] = [o.positiveInt('subscribers'), o.positiveInt('rounds'), o.flag('as-sent'), o.string('snapshot')];
    collectGarbage(); // fails now, not after the set-up, without --expose-gc
    const { writer } = createFrameSink<object>();
    /** Heap bytes per socket that a built engine of this shape holds, after a forced GC (and what it built, to check). */
    const measure = async (shape: Shape, snapshotDir: string | undefined): Promise<{ perSocket: number; groups: number; cachedDocuments: number }> => {
      collectGarbage();
      const before = process.memoryUsage().heapUsed;
      const compiler = createCompiler({ normalizeLiterals: !asSent });
      const conns: object[] = [];
      const { hub } = await startEngine<object>({
        writer,
        subscribe: (hub) => {
          const shared = shape === 'shared' ? compileSubscription(compiler, unicastQuery(0)) : undefined;
          for (let i = 0; i < subscribers; i++) {
            const conn = {};
            conns.push(conn);
            hub.subscribe(conn, '1', shared ?? compileSubscription(compiler, unicastQuery(i)));
          }
        },
      });
      collectGarbage();
      const after = process.memoryUsage().heapUsed;
      const { groups, subscribers: subscribed } = hub.stats();
      if (subscribed !== subscribers || conns.length !== subscribers) throw new Error(`${shape}: ${subscribed} subscribers, expected ${subscribers}`);
      if (snapshotDir !== undefined) writeHeapSnapshot(join(snapshotDir, `unicast-memory-${shape}.heapsnapshot`));
      return { perSocket: (after - before) / subscribers, groups, cachedDocuments: compiler.cachedDocuments };
    };
    const shapes: Shape[] = ['distinct', 'shared'];
    const seen = new Map<Shape, { groups: number; cachedDocuments: number }>();
    // The warm-up (round -1) builds code, shapes and the schema's caches; the last two rounds may write a snapshot.
    const { samples: bytes } = await alternate(shapes, rounds, async (shape, r) => {
      const last = r >= 0 && (r === rounds - 1 || r === rounds - 2);
      const m = await measure(shape, last && shape === 'distinct' ? snapshot : undefined);
      if (r >= 0) seen.set(shape, m);
      return m.perSocket;
    });
    const rows = shapes.map((shape) => {
      const s = seen.get(shape);
      return [shape, String(s?.groups ?? 0), String(s?.cachedDocuments ?? 0), medianRange(bytes.get(shape) ?? [], (b) => b.toFixed(0))];
    });
    const extra = median(bytes.get('distinct') ?? []) - median(bytes.get('shared') ?? []);
    return [
      `heap per socket after GC: ${subscribers} sockets, ${rounds} rounds each, alternating, literals ${asSent ? 'kept as sent' : 'moved'} (node ${process.version})`,
      markdownTable([['shape', 'groups', 'cached documents', 'bytes per socket, median (min–max)'], ...rows]),
      `a distinct operation costs ${extra.toFixed(0)} bytes of heap beyond a socket that shares one`,
    ].join('\n');
  },
};
