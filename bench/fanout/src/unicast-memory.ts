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
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createLogger } from '@wirestream/telemetry';
import { createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter, type Hub } from '@wirestream/gateway/internals';
import { median, parseCli } from '@wirestream/bench-kit';

const { values } = parseCli({
  options: {
    subscribers: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '4' },
    snapshot: { type: 'string' },
    'as-sent': { type: 'boolean', default: false },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const ROUNDS = Number(values.rounds);
const AS_SENT = values['as-sent'];
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const collect = gc;

const schema = loadWirestreamSchema(auctionSchemaPath);
const logger = createLogger({ name: 'bench', level: 'error' });
const SELECTION = '{ listing_id event_type occurred_at listing { title current_price { amount_cents } } }';
const keyOf = (i: number): string => `lst-${String(i).padStart(6, '0')}`;
const writer: ConnectionWriter<object> = {
  send: () => undefined,
  sendFrames: () => undefined,
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};
const access = { key: 'bench', authorize: (_route: unknown, args: Readonly<Record<string, unknown>>) => ({ ok: true as const, args }) };

type Shape = 'distinct' | 'shared';
interface Built {
  readonly hub: Hub<object>;
  readonly compiler: ReturnType<typeof createOperationCompiler>;
  readonly conns: object[];
}

function compileOne(compiler: ReturnType<typeof createOperationCompiler>, key: string): CompiledSubscription {
  const compiled = compiler.compile({ query: `subscription { listingUpdated(listing_id: "${key}") ${SELECTION} }` }, access);
  if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error(`bench operation does not compile: ${JSON.stringify(compiled)}`);
  return compiled.operation;
}

async function build(shape: Shape): Promise<Built> {
  const bus = createMemoryBus();
  const compiler = createOperationCompiler(schema, { channelPrefix: 'ws', normalizeLiterals: !AS_SENT });
  const hub = createHub<object>({ schema, broker: bus.broker, logger, writer });
  const conns: object[] = [];
  const shared = shape === 'shared' ? compileOne(compiler, keyOf(0)) : undefined;
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const conn = {};
    conns.push(conn);
    hub.subscribe(conn, '1', shared ?? compileOne(compiler, keyOf(i)));
  }
  while (hub.stats().confirmedChannels < hub.stats().channels) await new Promise((resolve) => setImmediate(resolve));
  return { hub, compiler, conns };
}

/** Heap bytes per socket that a built engine of this shape holds, after a forced GC (and what it built, to check). */
async function measure(shape: Shape, snapshotDir: string | undefined): Promise<{ perSocket: number; groups: number; cachedDocuments: number }> {
  collect();
  collect();
  const before = process.memoryUsage().heapUsed;
  const built = await build(shape);
  collect();
  collect();
  const after = process.memoryUsage().heapUsed;
  const { groups, subscribers } = built.hub.stats();
  if (subscribers !== SUBSCRIBERS) throw new Error(`${shape}: ${subscribers} subscribers, expected ${SUBSCRIBERS}`);
  if (snapshotDir !== undefined) writeHeapSnapshot(join(snapshotDir, `unicast-memory-${shape}.heapsnapshot`));
  const cachedDocuments = built.compiler.cachedDocuments;
  return { perSocket: (after - before) / SUBSCRIBERS, groups, cachedDocuments };
}

const shapes: Shape[] = ['distinct', 'shared'];
await measure('distinct', undefined); // warm-up: code, shapes and the schema's caches
await measure('shared', undefined);
const bytes = new Map<Shape, number[]>(shapes.map((s) => [s, []]));
const seen = new Map<Shape, { groups: number; cachedDocuments: number }>();
for (let r = 0; r < ROUNDS; r++) {
  for (const shape of r % 2 === 0 ? shapes : [...shapes].reverse()) {
    const last = r === ROUNDS - 1 || r === ROUNDS - 2;
    const m = await measure(shape, last && shape === 'distinct' ? values.snapshot : undefined);
    bytes.get(shape)?.push(m.perSocket);
    seen.set(shape, m);
  }
}
console.log(`heap per socket after GC: ${SUBSCRIBERS} sockets, ${ROUNDS} rounds each, alternating, literals ${AS_SENT ? 'kept as sent' : 'moved'} (node ${process.version})`);
console.log('| shape | groups | cached documents | bytes per socket, median (min–max) |');
console.log('| --- | --- | --- | --- |');
for (const shape of shapes) {
  const b = bytes.get(shape) ?? [];
  const s = seen.get(shape);
  console.log(`| ${shape} | ${s?.groups ?? 0} | ${s?.cachedDocuments ?? 0} | ${median(b).toFixed(0)} (${Math.min(...b).toFixed(0)}–${Math.max(...b).toFixed(0)}) |`);
}
const extra = median(bytes.get('distinct') ?? []) - median(bytes.get('shared') ?? []);
console.log(`a distinct operation costs ${extra.toFixed(0)} bytes of heap beyond a socket that shares one`);
process.exit(0);
