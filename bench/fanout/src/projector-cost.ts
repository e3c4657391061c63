/**
 * Cost per distinct operation per event (issue 18), in one process: what the gateway pays to turn
 * one event into one operation's `next` payload, three ways, on the same demo events, interleaved
 * in rounds so the machine's noise hits all alike:
 *
 *   execute   graphql-js `execute` + `JSON.stringify({ data, extensions })` (the gateway before)
 *   jit       graphql-jit's compiled query + `JSON.stringify({ data, extensions })`
 *   ours      the operation's projector (`CompiledSubscription.projector`), `execute` when it declines
 *
 * Each payload is then written as `--frames` frames (`head + payload + '}'` copied out as UTF-8, as
 * uWS does per subscriber): a payload made of many concatenated pieces costs again there.
 *
 * It also checks that each way writes execute's bytes: on the demo events, and on malformed ones
 * (a missing non-null field, an Int that is a float, an ID that is a boolean).
 */
import { execute, type ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { COMPACT_SELECTION, FULL_SELECTION } from '@wirestream/loadgen';
import { markdownTable, median } from '@wirestream/bench-kit';
import { alternate, compileSubscription, createCompiler, demoEvents, schema as ws, type OperationCompiler } from './engine-fixture.js';
import { countOption, type MicroBench } from './scenario.js';

const HEAD = '{"id":"0123456789abcdef","type":"next","payload":';

/** What uWS does with a payload for each subscriber: the frame `head + payload + '}'`, copied out as UTF-8, `frames` times. */
function writeFrames(payload: string, frames: number): number {
  let bytes = 0;
  for (let f = 0; f < frames; f++) bytes += Buffer.from(HEAD + payload + '}').length;
  return bytes;
}

const BID_SELECTION =
  'event_id event_type listing_id bid_id bidder_id amount { amount_cents currency_code } placed_at is_auto_bid ' +
  'previous_high_bid { bid_id bidder_id amount { amount_cents currency_code } placed_at is_auto_bid }';

interface Case {
  readonly label: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
  readonly kind: 'listing' | 'bid';
}

const CASES: readonly Case[] = [
  { label: 'full listing event (the sweep operation, ~2 KB)', query: `subscription Listings { listingUpdated { ${FULL_SELECTION} } }`, kind: 'listing' },
  { label: 'compact listing (list view, ~250 B)', query: `subscription Compact { listingUpdated { ${COMPACT_SELECTION} } }`, kind: 'listing' },
  {
    label: 'filtered: arguments from variables, full selection',
    query: `subscription Listing($type: String) { listingUpdated(event_type: $type) { ${FULL_SELECTION} } }`,
    variables: { type: 'ListingUpdated' },
    kind: 'listing',
  },
  {
    label: 'fragments, aliases, __typename, @include',
    query:
      'subscription Card($withBids: Boolean = true) { ev: listingUpdated { __typename id: listing_id ...Head listing { ...Price ' +
      'bids: recent_bids @include(if: $withBids) { bid_id amount { ...Amount } } seller: seller_info { name: display_name rating } } } } ' +
      'fragment Head on ListingEvent { event_id event_type occurred_at } ' +
      'fragment Price on Listing { title status current_price { ...Amount } reserve_price { ...Amount } } ' +
      'fragment Amount on Money { amount_cents currency_code }',
    kind: 'listing',
  },
  { label: 'full bid event', query: `subscription Bids { bidPlaced { ${BID_SELECTION} } }`, kind: 'bid' },
];

/** Demo events as the gateway holds them: snake_cased, then through JSON (what decodeEnvelope returns). */
function eventsOf(kind: 'listing' | 'bid', count: number): Record<string, unknown>[] {
  return demoEvents(kind, count).map((e) => JSON.parse(e.json) as Record<string, unknown>);
}

/** One way of rendering: event index → the `next` payload. */
type Render = (payload: Record<string, unknown>, extensions: Record<string, unknown>, tail: string) => string;

interface Prepared {
  readonly label: string;
  readonly ways: readonly (readonly [name: string, render: Render])[];
}

function prepare(compiler: OperationCompiler, c: Case): Prepared {
  const op = compileSubscription(compiler, { query: c.query, ...(c.variables === undefined ? {} : { variables: c.variables }) }, undefined, null);
  const { projector } = op;
  if (!projector) throw new Error(`${c.label}: has no projector`);
  const field = op.route.fieldName;
  const jit = compileQuery(ws.schema, op.document, op.operationName);
  if (!isCompiledQuery(jit)) throw new Error(`${c.label}: graphql-jit does not compile it: ${JSON.stringify(jit)}`);
  const jitQuery = jit as CompiledQuery;
  const viaExecute: Render = (payload, extensions) => {
    const r = execute({ schema: ws.schema, document: op.document, rootValue: { [field]: payload }, variableValues: op.variables, operationName: op.operationName }) as ExecutionResult;
    return JSON.stringify(r.errors ? { errors: r.errors, data: r.data } : { data: r.data, extensions });
  };
  const viaJit: Render = (payload, extensions) => {
    const r = jitQuery.query({ [field]: payload }, undefined, op.variables) as ExecutionResult;
    return JSON.stringify(r.errors ? { errors: r.errors, data: r.data } : { data: r.data, extensions });
  };
  // The extensions' JSON (`tail`) is written once per event for every operation, as renderPayload does.
  const viaOurs: Render = (payload, extensions, tail) => projector.project(payload, '{"data":', tail) ?? viaExecute(payload, extensions, tail);
  return {
    label: c.label,
    ways: [
      ['execute', viaExecute],
      ['jit', viaJit],
      ['ours', viaOurs],
    ],
  };
}

/**
 * CPU µs (user + system of this process) per event of one way over all events (each payload written
 * as `frames` frames), repeated until at least `minMs` of CPU passed. CPU time, not wall time: on a
 * shared machine the wall clock also counts the time other processes held the core.
 */
function timeWay({ minMs, frames }: { minMs: number; frames: number }, render: Render, payloads: readonly Record<string, unknown>[], extensions: readonly Record<string, unknown>[], tails: readonly string[]): number {
  let n = 0;
  let bytes = 0;
  const start = process.cpuUsage();
  let cpuUs = 0;
  do {
    for (let i = 0; i < payloads.length; i++) bytes += writeFrames(render(payloads[i] as Record<string, unknown>, extensions[i] as Record<string, unknown>, tails[i] as string), frames);
    n += payloads.length;
    const used = process.cpuUsage(start);
    cpuUs = used.user + used.system;
  } while (cpuUs < minMs * 1_000);
  if (bytes === 0) throw new Error('nothing rendered');
  return cpuUs / n;
}

/** Malformed copies of an event: each makes graphql-js report an error. */
function malformed(payload: Record<string, unknown>, kind: 'listing' | 'bid'): Record<string, unknown>[] {
  const copy = (): Record<string, unknown> => JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
  const out: Record<string, unknown>[] = [];
  const missing = copy();
  delete missing['event_id'];
  out.push(missing);
  const float = copy();
  if (kind === 'listing') ((float['listing'] as Record<string, unknown>)['current_price'] as Record<string, unknown>)['amount_cents'] = 12.5;
  else (float['amount'] as Record<string, unknown>)['amount_cents'] = 12.5;
  out.push(float);
  const bool = copy();
  bool['listing_id'] = true;
  out.push(bool);
  const coerced = copy();
  coerced['listing_id'] = 42; // an ID as a number: coerced, no error
  out.push(coerced);
  return out;
}

export const projectorCost: MicroBench = {
  description: "one operation's payload per event: graphql-js execute vs graphql-jit vs the projector, checked byte for byte (issue 18)",
  options: {
    events: countOption(200, 'demo events of each kind'),
    rounds: countOption(7, 'interleaved rounds per way'),
    'min-ms': { arg: 'MS', default: '150', help: 'CPU ms each way runs per round at least' },
    frames: countOption(2, 'frames written from each payload (the sweep at 1,000 operations has 2 sockets per operation)'),
  },
  async run(o) {
    const [count, rounds] = [o.positiveInt('events'), o.positiveInt('rounds')];
    const timing = { minMs: o.positiveInt('min-ms'), frames: o.positiveInt('frames') };
    const compiler = createCompiler();
    const eventsByKind = { listing: eventsOf('listing', count), bid: eventsOf('bid', count) };
    const rows: string[][] = [['operation', 'execute µs', 'graphql-jit µs', 'ours µs', 'jit vs execute', 'ours vs execute', 'identical to execute (jit / ours)', 'malformed identical (jit / ours)']];
    for (const c of CASES) {
      const prepared = prepare(compiler, c);
      const payloads = eventsByKind[c.kind];
      const extensions = payloads.map((_, i) => ({ position: { topic: `${c.kind}-events`, partition: i % 6, offset: String(1_000 + i) } }));
      const tails = extensions.map((e) => ',"extensions":' + JSON.stringify(e) + '}');
      const [, reference] = prepared.ways[0] as readonly [string, Render];
      const identical = prepared.ways.map(([, render]) => payloads.filter((p, i) => render(p, extensions[i] as Record<string, unknown>, tails[i] as string) === reference(p, extensions[i] as Record<string, unknown>, tails[i] as string)).length);
      const bad = payloads.slice(0, 10).flatMap((p) => malformed(p, c.kind));
      const badExt = { position: { topic: 't', partition: 0, offset: '1' } };
      const badTail = ',"extensions":' + JSON.stringify(badExt) + '}';
      const badIdentical = prepared.ways.map(([, render]) => bad.filter((p) => render(p, badExt, badTail) === reference(p, badExt, badTail)).length);
      // Interleaved, and the order rotates per round so no way always runs first after a GC.
      const { samples } = await alternate(prepared.ways, rounds, ([, render]) => timeWay(timing, render, payloads, extensions, tails), { order: 'rotate' });
      const [ex, jit, ours] = prepared.ways.map((way) => median(samples.get(way) ?? [])) as [number, number, number];
      rows.push([
        prepared.label,
        ex.toFixed(2),
        jit.toFixed(2),
        ours.toFixed(2),
        `${(ex / jit).toFixed(1)}x faster`,
        `${(ex / ours).toFixed(1)}x faster`,
        `${identical[1]}/${payloads.length} / ${identical[2]}/${payloads.length}`,
        `${badIdentical[1]}/${bad.length} / ${badIdentical[2]}/${bad.length}`,
      ]);
      console.error(`  ${prepared.label}: execute ${ex.toFixed(2)} µs, jit ${jit.toFixed(2)} µs, ours ${ours.toFixed(2)} µs`);
    }
    return [
      `\nCPU µs per operation per event (median of ${rounds} interleaved rounds, ≥ ${timing.minMs} ms each, ${count} demo events, each payload written as ${timing.frames} frames, node ${process.version})\n`,
      markdownTable(rows),
    ].join('\n');
  },
};
