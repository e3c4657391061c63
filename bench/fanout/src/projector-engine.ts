#!/usr/bin/env node
/**
 * µs of CPU per extra distinct operation per event inside the fan-out engine (issue 18), in one
 * process: the real hub (`createHub` on the in-process bus) with 1 and with K distinct operations
 * (2 subscribers each at K = 1,000, like the sweep's 2,000 sockets), fed the same demo envelopes, with
 * each operation's projector and with it taken away (`execute`, the gateway before), alternating
 * rounds. The writer lays out every frame as the gateway's does (a group's payloads encoded to
 * UTF-8 once, each frame `head + payload + '}'` copied into a scratch buffer) and drops it, so
 * uWS, sockets and the load client are out of the figure.
 *
 *   node bench/fanout/dist/projector-engine.js [--sockets 2000] [--distinct 1000] [--events 200] [--rounds 5] [--paths execute,projector]
 */
import type { CompiledSubscription } from '@wirestream/gateway/internals';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { markdownTable, median, parseCli, positiveInts } from '@wirestream/bench-kit';
import { alternate, compileSubscription, cpuMicros, createCompiler, createFrameSink, demoEvents, feed, listingEvents, runEngineBench, startEngine, turn, type Engine } from './engine-fixture.js';

const { values } = parseCli({
  options: {
    sockets: { type: 'string', default: '2000' },
    distinct: { type: 'string', default: '1000' },
    events: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
    // e.g. `--paths projector` with `node --cpu-prof` to profile one path alone
    paths: { type: 'string', default: 'execute,projector' },
  },
});
const PATHS = new Set(values.paths.split(','));
const { sockets: SOCKETS, distinct: DISTINCT, events: EVENTS, rounds: ROUNDS } = positiveInts(values, ['sockets', 'distinct', 'events', 'rounds']);

const demo = demoEvents('listing', EVENTS);
const events = listingEvents(EVENTS, (i) => ({ key: demo[i]?.key ?? '', payload: demo[i]?.json ?? '' }));
const sink = createFrameSink<object>({ layout: 'copy' });

/** The sweep's operations: the full selection, distinct only by name. */
function operations(distinct: number, projected: boolean): CompiledSubscription[] {
  const compiler = createCompiler();
  return Array.from({ length: distinct }, (_, i) => {
    const operation = compileSubscription(compiler, `subscription Listings${i} { listingUpdated { ${FULL_SELECTION} } }`, `Listings${i}`, null);
    if (!operation.projector) throw new Error('the sweep operation has no projector');
    return projected ? operation : { ...operation, projector: undefined };
  });
}

function engine(distinct: number, projected: boolean): Promise<Engine<object>> {
  const ops = operations(distinct, projected);
  return startEngine<object>({
    writer: sink.writer,
    subscribe: (hub) => {
      for (let i = 0; i < SOCKETS; i++) hub.subscribe({}, String(i), ops[i % distinct] as CompiledSubscription);
    },
  });
}

/**
 * CPU µs per event: the corpus in bursts of 50 (as ioredis hands over socket reads), then until
 * every subscriber has every event (the hub works in time slices across turns, decision 0013).
 */
async function round({ bus }: Engine<object>): Promise<number> {
  const used = await cpuMicros(async () => {
    const target = sink.frames() + events.length * SOCKETS;
    await feed(bus, events);
    while (sink.frames() < target) await turn();
    if (sink.frames() !== target) throw new Error(`${sink.frames() - target} frames more than the subscribers' events`);
  });
  return used / events.length;
}

runEngineBench(async () => {
  const sides = (
    [
      ['execute', 1, false],
      ['execute', DISTINCT, false],
      ['projector', 1, true],
      ['projector', DISTINCT, true],
    ] as const
  ).filter(([path]) => PATHS.has(path));
  const engines: Engine<object>[] = [];
  for (const [, distinct, projected] of sides) engines.push(await engine(distinct, projected));
  const { samples } = await alternate(
    sides.map((_, s) => s),
    ROUNDS,
    (s) => round(engines[s] as Engine<object>),
    { order: 'rotate' },
  );
  const medians = sides.map((_, s) => median(samples.get(s) ?? []));
  const perOp = (one: number, many: number): string => ((many - one) / (DISTINCT - 1)).toFixed(2);
  const rows: string[][] = [['path', 'CPU µs / event, 1 op', `CPU µs / event, ${DISTINCT} ops`, 'µs per extra operation per event']];
  for (let s = 0; s < sides.length; s += 2) {
    const [one, many] = [medians[s] as number, medians[s + 1] as number];
    rows.push([sides[s]?.[0] === 'execute' ? 'execute (before)' : 'projector', one.toFixed(0), many.toFixed(0), perOp(one, many)]);
  }
  console.log(`\nfan-out engine, ${SOCKETS} subscribers, 1 vs ${DISTINCT} distinct operations (full selection), ${EVENTS} demo events per round, ${ROUNDS} rounds, node ${process.version}\n`);
  console.log(markdownTable(rows));
  console.log(`\nframes copied: ${(sink.bytes() / 1e9).toFixed(2)} GB`);
});
