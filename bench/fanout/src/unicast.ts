/**
 * The unicast scenario (issue 37): each socket follows its own listing
 * (`listingUpdated(listing_id: "lst-004217")`, the key written in the document as partners write
 * it), so a gateway holds as many distinct operations as sockets, each matching a sliver of the
 * topic. Events are spread evenly over the keys (event i is listing i mod K) and published in
 * ingest's batch form, so every event is delivered exactly once. Each socket count runs with as
 * many keys, next to a small reference (200 sockets, 200 keys); base, change and the bare floor
 * (bare uWS sending each envelope whole to its key's sockets) interleaved.
 */
import { FULL_SELECTION, type ExplicitOperation } from '@wirestream/loadgen';
import { markdownTable, median } from '@wirestream/bench-kit';
import { prepareEvents } from './publisher.js';
import { fmtBytes, fmtInt, fmtMs, rowNotes, section } from './report.js';
import { inRounds, roundTag } from './rounds.js';
import { runStack, type RunContext, type RunSpec, type StackRun } from './run-stack.js';
import { drainTimeoutMs, textSection, type Scenario } from './scenario.js';
import { STACK_SHORT, type StackName } from './servers.js';

export interface UnicastOptions {
  /** Socket counts, each with as many distinct keys (one per socket). */
  readonly sockets: readonly number[];
  /** The reference count (sockets = keys): "within 2× of the 200-key case". */
  readonly referenceKeys: number;
  readonly events: number;
  /** Events per chunk in ingest's batch form; 0: one PUBLISH per event. */
  readonly batch: number;
  /** Events per second; 0: back-to-back. */
  readonly ratePerSecond: number;
  /**
   * The share of the topic's keys this gateway's sockets follow (1: every key has a socket here; 0.1:
   * events spread over ten times as many keys, as for one of ten gateways behind a load balancer).
   */
  readonly keyShare: number;
  readonly stacks: readonly StackName[];
  readonly repeat: number;
  readonly drainTimeoutMs: number;
  readonly workers: number | undefined;
}

interface UnicastRun {
  readonly keys: number;
  readonly repeat: number;
  readonly run: StackRun;
}

const keyOf = (i: number): string => `lst-${String(i).padStart(6, '0')}`;
/** Gateway CPU per delivered event (with a key share below 1, the events nobody here follows cost their part too). */
const cpuUsPerEvent = (r: StackRun): number => (r.serverCpuMs * 1_000) / Math.max(1, r.unique);
const cpuUsPerPublished = (r: StackRun): number => (r.serverCpuMs * 1_000) / r.spec.events;
/** Every event delivered once: a run that lost some (its Redis connection dropped, say) measured less work and is left out of the medians. */
const complete = (r: StackRun): boolean => r.unique === r.expected && r.duplicates === 0;
const deliveriesPerCore = (r: StackRun): number => (r.serverCpuMs > 0 ? r.unique / (r.serverCpuMs / 1_000) : 0);

/** The subscribe requests of K keys: one document per key, the key a literal argument. */
export function unicastOperations(keys: number): ExplicitOperation[] {
  return Array.from({ length: keys }, (_, k) => ({
    label: keyOf(k),
    payload: { query: `subscription { listingUpdated(listing_id: "${keyOf(k)}") { ${FULL_SELECTION} } }` },
  }));
}

export async function unicastSection(ctx: RunContext, options: UnicastOptions): Promise<string> {
  const { events, batch, ratePerSecond, stacks, repeat, keyShare } = options;
  const counts = [options.referenceKeys, ...options.sockets.filter((n) => n !== options.referenceKeys)];
  const title =
    `Unicast: ${counts.map(fmtInt).join(' / ')} sockets, each following its own key; ${fmtInt(events)} events ` +
    `${ratePerSecond > 0 ? `at ${fmtInt(ratePerSecond)}/s` : 'back-to-back'}, ${batch > 0 ? `ingest's batch form (${batch} events per chunk)` : 'one PUBLISH per event'}` +
    (keyShare < 1 ? `; the sockets follow ${(keyShare * 100).toFixed(0)} % of the topic's keys` : '');
  ctx.log(`\n## ${title}\n`);
  const runs: UnicastRun[] = [];
  for (const keys of counts) {
    // Event i is listing i mod K/share: every key gets its share; with a share of 1 every event has exactly one subscriber.
    const topicKeys = Math.max(keys, Math.round(keys / keyShare));
    const corpus = prepareEvents(events, ctx.route, ctx.channelPrefix, topicKeys, (i) => keyOf(i % topicKeys));
    const operations = unicastOperations(keys);
    const spec: RunSpec = {
      sockets: keys,
      plan: { operations, filterKeys: [] },
      expectedPerOperation: corpus.countByKey(operations.map((o) => o.label), events),
      events,
      ratePerSecond,
      batch,
      drainTimeoutMs: options.drainTimeoutMs,
      stallTimeoutMs: 10_000,
      idleMs: 500,
      ...(options.workers === undefined ? {} : { workers: options.workers }),
    };
    // Interleaved per repetition: a slow drift of a shared machine hits base and change alike.
    const measured = await inRounds(repeat, stacks, async (stack, rep) => {
      ctx.log(`  ${STACK_SHORT[stack]}, ${fmtInt(keys)} keys${roundTag(rep, repeat)} …`);
      const run = { ...(await runStack(stack, spec, { ...ctx, corpus })), repeat: rep };
      ctx.log(
        `    ${fmtInt(run.unique)}/${fmtInt(run.expected)}, ${fmtInt(run.duplicates)} dup, ${cpuUsPerEvent(run).toFixed(1)} µs CPU/event, ` +
          `${fmtInt(deliveriesPerCore(run))} deliveries per core, heap/socket ${fmtBytes(run.perSocket.heapBytes)}`,
      );
      return { keys, repeat: rep, run };
    });
    runs.push(...measured);
  }
  const body = [
    ...derivedLines(runs, options).map((l) => `- ${l}`),
    '',
    summaryTable(runs, options),
    '',
    runTable(runs),
    '',
    'How to read: one gateway process per row (default settings, anonymous, history off), K sockets each subscribing ' +
      '`listingUpdated(listing_id: "lst-…")` with its own key written in the document (K distinct documents and operations), ' +
      `and the same demo listing events spread evenly over the K keys${keyShare < 1 ? ` ÷ ${keyShare} (so only ${(keyShare * 100).toFixed(0)} % of the events have a subscriber here)` : ''}, ` +
      'each event with at most one subscriber. "CPU µs / delivery" ' +
      'is the gateway\'s user + system CPU from the first publish to the last delivery, per event delivered; "per published event" divides by every event published. ' +
      '"deliveries per core" is deliveries per second of that CPU. "major GCs in traffic" counts the server\'s mark-compacts over the same window ' +
      '(its /metrics; n/a for the bare floor): each also costs concurrent marking on V8\'s worker threads, the main source of the spread ' +
      'between sittings (decision 0044). "heap / socket" is (subscribed − idle) V8 heap after two forced ' +
      'GCs, per socket: what a distinct operation costs with its socket. Base, change and the bare floor run interleaved in one run; ' +
      '"bare uWS unicast" splits each batch part and writes each envelope whole to its key\'s sockets, with no payload parse, filter or projection: ' +
      'the least any server does per unicast delivery on this machine (read the message, find the socket, write one frame).',
    '',
    ...rowNotes(runs, labelOf),
  ].join('\n');
  return section(ctx.log, title, body);
}

function labelOf(u: UnicastRun | undefined): string {
  return u === undefined ? '?' : `${STACK_SHORT[u.run.stack]} ${fmtInt(u.keys)} keys #${u.repeat}`;
}

function runTable(runs: readonly UnicastRun[]): string {
  const rows: string[][] = [
    ['stack', 'keys = sockets', 'rep', 'delivered / expected', 'dup', 'deliveries/s', 'p99', 'renders / event', 'CPU µs / delivery', 'CPU µs / published event', 'deliveries per core', 'major GCs in traffic', 'heap / socket (GC)', 'RSS / socket (GC)', "others' CPU"],
  ];
  for (const { keys, repeat, run } of runs) {
    rows.push([
      STACK_SHORT[run.stack],
      fmtInt(keys),
      String(repeat),
      `${fmtInt(run.unique)} / ${fmtInt(run.expected)}`,
      fmtInt(run.duplicates),
      fmtInt(run.deliveriesPerSec),
      fmtMs(run.latencyMs.p99),
      run.executions === undefined ? 'n/a' : (run.executions / run.spec.events).toFixed(2),
      cpuUsPerEvent(run).toFixed(1),
      cpuUsPerPublished(run).toFixed(1),
      fmtInt(deliveriesPerCore(run)),
      run.majorGcs === undefined ? 'n/a' : String(run.majorGcs),
      fmtBytes(run.perSocket.heapBytes),
      fmtBytes(run.perSocket.rssBytes),
      `${run.othersCpuPct.toFixed(0)} %`,
    ]);
  }
  return markdownTable(rows);
}

/** Medians over the complete runs of each stack and key count (what scripts/capacity.mjs reads). */
function summaryTable(runs: readonly UnicastRun[], options: UnicastOptions): string {
  const rows: string[][] = [['stack', 'keys = sockets', 'complete runs', 'CPU µs / event median', 'deliveries per core median', 'heap / socket median']];
  for (const stack of options.stacks) {
    for (const keys of [...new Set(runs.map((u) => u.keys))]) {
      const all = runs.filter((u) => u.run.stack === stack && u.keys === keys).map((u) => u.run);
      const xs = all.filter(complete);
      if (all.length === 0) continue;
      rows.push([
        STACK_SHORT[stack],
        fmtInt(keys),
        `${xs.length} of ${all.length}`,
        xs.length === 0 ? 'n/a' : median(xs.map(cpuUsPerEvent)).toFixed(1),
        xs.length === 0 ? 'n/a' : fmtInt(median(xs.map(deliveriesPerCore))),
        xs.length === 0 ? 'n/a' : fmtBytes(median(xs.map((r) => r.perSocket.heapBytes ?? Number.NaN))),
      ]);
    }
  }
  return markdownTable(rows);
}

/** Per stack the medians by key count, the ratio to the reference, and change ÷ base per key count (complete runs only). */
function derivedLines(runs: readonly UnicastRun[], options: UnicastOptions): string[] {
  const lines: string[] = [];
  const of = (stack: StackName, keys: number): StackRun[] => runs.filter((u) => u.run.stack === stack && u.keys === keys && complete(u.run)).map((u) => u.run);
  const keyCounts = [...new Set(runs.map((u) => u.keys))];
  for (const stack of options.stacks) {
    const reference = median(of(stack, options.referenceKeys).map(cpuUsPerEvent));
    for (const keys of keyCounts) {
      const xs = of(stack, keys);
      if (xs.length === 0) continue;
      const cpu = median(xs.map(cpuUsPerEvent));
      const incomplete = runs.filter((u) => u.run.stack === stack && u.keys === keys && !complete(u.run)).length;
      lines.push(
        `${STACK_SHORT[stack]}, ${fmtInt(keys)} keys: ${cpu.toFixed(1)} µs CPU per delivered event (runs ${xs.map((r) => cpuUsPerEvent(r).toFixed(1)).join(', ')}), ` +
          `${fmtInt(median(xs.map(deliveriesPerCore)))} deliveries per core` +
          (keys === options.referenceKeys ? '' : `, ${(cpu / reference).toFixed(2)}× the ${fmtInt(options.referenceKeys)}-key case`) +
          `; ${incomplete === 0 ? 'every event delivered once in every run' : `${incomplete} run(s) did not deliver every event and are left out`}`,
      );
    }
  }
  // Change vs base, and ours vs the bare floor: per repetition, then the median.
  for (const [base, change] of [['ours-base', 'ours'], ['bare-unicast', 'ours']] as const) {
    if (!options.stacks.includes(base) || !options.stacks.includes(change)) continue;
    for (const keys of keyCounts) {
      const pairs = [...new Set(runs.map((u) => u.repeat))].flatMap((rep) => {
        const b = runs.find((u) => u.keys === keys && u.repeat === rep && u.run.stack === base && complete(u.run))?.run;
        const c = runs.find((u) => u.keys === keys && u.repeat === rep && u.run.stack === change && complete(u.run))?.run;
        return b && c ? [{ cpu: cpuUsPerEvent(b) / cpuUsPerEvent(c), perCore: deliveriesPerCore(c) / deliveriesPerCore(b) }] : [];
      });
      if (pairs.length === 0) continue;
      lines.push(
        base === 'bare-unicast'
          ? `**${fmtInt(keys)} keys, ${STACK_SHORT[change]} vs ${STACK_SHORT[base]}** (same repetition): CPU per delivered event ×${median(pairs.map((p) => 1 / p.cpu)).toFixed(2)} the bare floor ` +
              `(runs ${pairs.map((p) => `×${(1 / p.cpu).toFixed(2)}`).join(', ')})`
          : `**${fmtInt(keys)} keys, ${STACK_SHORT[change]} vs ${STACK_SHORT[base]}** (same repetition): deliveries per core ×${median(pairs.map((p) => p.perCore)).toFixed(2)} ` +
              `(runs ${pairs.map((p) => `×${p.perCore.toFixed(2)}`).join(', ')}); CPU per event ÷${median(pairs.map((p) => p.cpu)).toFixed(2)}`,
      );
    }
  }
  return lines;
}

export const unicastScenario: Scenario = {
  name: 'unicast',
  description:
    'opt-in: each socket following its own key, at each socket count, next to a reference of K sockets on K keys; ' +
    'ours-base (with --base-gateway), ours and the bare uWS unicast floor, interleaved with --repeat',
  report: 'unicast',
  options: {
    'unicast-sockets': { arg: 'LIST', default: '1000,10000,19000', quick: '1000', help: 'socket counts, each socket following its own key' },
    'unicast-reference-keys': { arg: 'K', default: '200', help: 'sockets (and keys) of the reference' },
    'unicast-events': { arg: 'E', default: '20000', quick: '2000', help: 'events' },
    'unicast-batch': { arg: 'B', default: '64', help: "events per chunk of ingest's batch form (0: one PUBLISH per event)" },
    'unicast-rate': { arg: 'EV/S', default: '2000', quick: '0', help: 'events per second (0: back-to-back)' },
    'unicast-no-bare': { help: 'leave out the bare uWS unicast floor (each envelope sent whole to its key\'s sockets, no parse)' },
    'unicast-key-share': {
      arg: 'F',
      default: '1',
      help: "the share of the topic's keys the sockets follow (0.1: events over 10× the keys, as one of ten gateways sees them)",
    },
  },
  prepare(options, common) {
    const keyShare = Number(options.string('unicast-key-share'));
    if (!(keyShare > 0 && keyShare <= 1)) throw new RangeError(`--unicast-key-share must be a number above 0 and at most 1, got ${String(options.string('unicast-key-share'))}`);
    const unicastOptions: UnicastOptions = {
      sockets: options.numbers('unicast-sockets'),
      referenceKeys: options.positiveInt('unicast-reference-keys'),
      events: options.positiveInt('unicast-events'),
      batch: options.number('unicast-batch'),
      ratePerSecond: options.number('unicast-rate'),
      keyShare,
      stacks: [...(common.baseGateway === undefined ? [] : (['ours-base'] as const)), 'ours', ...(options.flag('unicast-no-bare') ? [] : (['bare-unicast'] as const))],
      repeat: common.repeat,
      drainTimeoutMs: drainTimeoutMs(common, 60_000),
      workers: common.workers,
    };
    // Unicast prepares its own events (one key per socket): the shared corpus needs none for it.
    return textSection(0, (env) => unicastSection(env.ctx, unicastOptions));
  },
};
