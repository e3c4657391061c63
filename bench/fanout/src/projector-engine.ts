/**
 * µs of CPU per extra distinct operation per event inside the fan-out engine (issue 18), in one
 * process: the real hub (`createHub` on the in-process bus) with 1 and with K distinct operations
 * (2 subscribers each at K = 1,000, like the sweep's 2,000 sockets), fed the same demo envelopes, with
 * each operation's projector and with it taken away (`execute`, the gateway before), alternating
 * rounds. The writer lays out every frame as the gateway's does (a group's payloads encoded to
 * UTF-8 once, each frame `head + payload + '}'` copied into a scratch buffer) and drops it, so
 * uWS, sockets and the load client are out of the figure.
 */
import type { CompiledSubscription } from '@wirestream/gateway/internals';
import { FULL_SELECTION } from '@wirestream/loadgen';
import { markdownTable, median } from '@wirestream/bench-kit';
import { alternate, compileSubscription, cpuMicros, createCompiler, createFrameSink, demoEvents, engineCounts, engineOptions, feed, listingEvents, startEngine, turn, type Engine } from './engine-fixture.js';
import { countOption, type MicroBench } from './scenario.js';

export const projectorEngine: MicroBench = {
  description: 'µs per extra distinct operation per event in the hub, projector vs execute (issue 18)',
  options: {
    ...engineOptions(2_000, 200, 5),
    distinct: countOption(1_000, 'distinct operations of the many side (the other has 1)'),
    paths: { arg: 'LIST', default: 'execute,projector', help: 'the paths measured (one alone to profile it with node --cpu-prof)' },
  },
  async run(o) {
    const { subscribers: sockets, count, rounds } = engineCounts(o);
    const distinct = o.positiveInt('distinct');
    const paths = new Set(o.required('paths').split(','));
    const demo = demoEvents('listing', count);
    const events = listingEvents(count, (i) => ({ key: demo[i]?.key ?? '', payload: demo[i]?.json ?? '' }));
    const sink = createFrameSink<object>({ layout: 'copy' });
    const sides = (
      [
        ['execute', 1, false],
        ['execute', distinct, false],
        ['projector', 1, true],
        ['projector', distinct, true],
      ] as const
    ).filter(([path]) => paths.has(path));
    const engines: Engine<object>[] = [];
    for (const [, k, projected] of sides) {
      const ops = operations(k, projected);
      engines.push(
        await startEngine<object>({
          writer: sink.writer,
          subscribe: (hub) => {
            for (let i = 0; i < sockets; i++) hub.subscribe({}, String(i), ops[i % k] as CompiledSubscription);
          },
        }),
      );
    }
    /**
     * CPU µs per event: the corpus in bursts of 50 (as ioredis hands over socket reads), then until
     * every subscriber has every event (the hub works in time slices across turns, decision 0013).
     */
    const round = async (s: number): Promise<number> => {
      const { bus } = engines[s] as Engine<object>;
      const used = await cpuMicros(async () => {
        const target = sink.frames() + events.length * sockets;
        await feed(bus, events);
        while (sink.frames() < target) await turn();
        if (sink.frames() !== target) throw new Error(`${sink.frames() - target} frames more than the subscribers' events`);
      });
      return used / events.length;
    };
    const { samples } = await alternate(
      sides.map((_, s) => s),
      rounds,
      round,
      { order: 'rotate' },
    );
    const medians = sides.map((_, s) => median(samples.get(s) ?? []));
    const rows: string[][] = [['path', 'CPU µs / event, 1 op', `CPU µs / event, ${distinct} ops`, 'µs per extra operation per event']];
    for (let s = 0; s < sides.length; s += 2) {
      const [one, many] = [medians[s] as number, medians[s + 1] as number];
      rows.push([sides[s]?.[0] === 'execute' ? 'execute (before)' : 'projector', one.toFixed(0), many.toFixed(0), ((many - one) / (distinct - 1)).toFixed(2)]);
    }
    return [
      `\nfan-out engine, ${sockets} subscribers, 1 vs ${distinct} distinct operations (full selection), ${count} demo events per round, ${rounds} rounds, node ${process.version}\n`,
      markdownTable(rows),
      `\nframes copied: ${(sink.bytes() / 1e9).toFixed(2)} GB`,
    ].join('\n');
  },
};

/** The sweep's operations: the full selection, distinct only by name. */
function operations(distinct: number, projected: boolean): CompiledSubscription[] {
  const compiler = createCompiler();
  return Array.from({ length: distinct }, (_, i) => {
    const operation = compileSubscription(compiler, `subscription Listings${i} { listingUpdated { ${FULL_SELECTION} } }`, `Listings${i}`, null);
    if (!operation.projector) throw new Error('the sweep operation has no projector');
    return projected ? operation : { ...operation, projector: undefined };
  });
}
