/**
 * The bandwidth scenario: bytes per delivery on the wire and server CPU per delivery of our gateway
 * with plain frames, permessage-deflate, delta mode and both, in one run, on the same demo events,
 * the same N sockets and the same load client (which negotiates deflate like a browser, inflates,
 * applies deltas and still checks every position). With --base-gateway the base build's plain row
 * runs too, interleaved: what the change costs deliveries that use neither saving.
 *
 * Two plans: `shared` (every socket the same unfiltered operation: consecutive payloads are mostly
 * different listings) and `filtered` (each socket follows one listing: the same object again and
 * again, the dashboards delta mode is for).
 */
import { parseMix, type OperationPlan } from '@wirestream/loadgen';
import { markdownTable, median } from '@wirestream/bench-kit';
import { prepareEvents } from './publisher.js';
import { fmtBytes, fmtInt, fmtMs, serverUsPerDelivery } from './report.js';
import { inRounds, roundTag } from './rounds.js';
import { runStack, type RunContext, type StackRun } from './run-stack.js';
import { drainTimeoutMs, withWorkers, type CommonOptions, type OptionValues, type Scenario } from './scenario.js';

interface Config {
  readonly name: string;
  /** `ours-base`: the --base-gateway checkout's build. */
  readonly stack?: 'ours' | 'ours-base';
  readonly what: string;
  readonly gatewayEnv: Readonly<Record<string, string>>;
  readonly wire: { readonly deflate: boolean; readonly delta: boolean };
}

const CONFIGS: readonly Config[] = [
  { name: 'plain (base)', stack: 'ours-base', what: 'the --base-gateway build, no compression, no delta', gatewayEnv: {}, wire: { deflate: false, delta: false } },
  { name: 'plain', what: 'GATEWAY_COMPRESSION=off, no delta', gatewayEnv: { GATEWAY_COMPRESSION: 'off' }, wire: { deflate: false, delta: false } },
  { name: 'deflate', what: 'GATEWAY_COMPRESSION=shared, client offers permessage-deflate', gatewayEnv: { GATEWAY_COMPRESSION: 'shared' }, wire: { deflate: true, delta: false } },
  { name: 'delta', what: 'subscribe with extensions.delta "fossil"', gatewayEnv: { GATEWAY_COMPRESSION: 'off' }, wire: { deflate: false, delta: true } },
  { name: 'deflate+delta', what: 'both', gatewayEnv: { GATEWAY_COMPRESSION: 'shared' }, wire: { deflate: true, delta: true } },
];

interface Plan {
  readonly title: string;
  readonly plan: OperationPlan;
  readonly events: number;
  readonly rate: number;
}

interface BandwidthOptions {
  readonly sockets: number;
  readonly listings: number;
  readonly configs: readonly Config[];
  readonly plans: readonly Plan[];
  readonly repeat: number;
  readonly common: CommonOptions;
}

const HOW_TO_READ = [
  'One gateway process per row (`node apps/gateway/dist/main.js`), the same demo listing events ' +
    '(snake_cased by our transform, published into a private redis-server), the same load client (`@wirestream/loadgen`: raw ' +
    'TCP; with deflate it offers `permessage-deflate; client_max_window_bits` as browsers do and inflates, with delta it ' +
    'subscribes with `extensions: { delta: "fossil" }` and applies the deltas, and in every row it checks each position).',
  '',
  '- **wire bytes per delivery**: bytes the client sockets read after the upgrade (frame headers and deflate included; ' +
    'a few bytes of `connection_ack` and pings too), over distinct deliveries. The ratio is to `plain` of the same plan.',
  "- **server CPU per delivery**: the gateway process's user + system CPU from the first publish to the last delivery, over distinct deliveries.",
  '- Rows run one after the other on a 2-core machine that other work shares: read CPU as ratios within a table, and see the last column.',
].join('\n');

const perDelivery = (total: number, r: StackRun): number => (r.unique > 0 ? total / r.unique : Number.NaN);

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(0)} %` : 'n/a';
}

/** One row per config: the run with the median server CPU per delivery, and the range over repeats. */
function resultTable(all: readonly { config: Config; run: StackRun }[], repeat: number): string {
  const byConfig = new Map<Config, StackRun[]>();
  for (const { config, run } of all) byConfig.set(config, [...(byConfig.get(config) ?? []), run]);
  const runs = [...byConfig.entries()].map(([config, rs]) => {
    const m = median(rs.map(serverUsPerDelivery));
    const run = rs.reduce((best, r) => (Math.abs(serverUsPerDelivery(r) - m) < Math.abs(serverUsPerDelivery(best) - m) ? r : best));
    const range = rs.length > 1 ? ` [${Math.min(...rs.map(serverUsPerDelivery)).toFixed(2)}–${Math.max(...rs.map(serverUsPerDelivery)).toFixed(2)}]` : '';
    return { config, run, cpu: m, range };
  });
  const base = runs.find((r) => r.config.name === 'plain');
  // Ratios are to `plain` of this build; `plain (base)` against it is what the change costs.
  const ratio = (value: number, of: number | undefined): string => (of === undefined || !(of > 0) ? '' : ` (${(value / of).toFixed(2)}×)`);
  return markdownTable([
    [
      'config',
      'delivered',
      'deflated / delta frames',
      'wire bytes per delivery',
      'payload bytes per delivery (inflated)',
      repeat > 1 ? `server CPU µs per delivery (median of ${repeat} [range])` : 'server CPU µs per delivery',
      'client CPU µs per delivery',
      'latency p50 / p99',
      'server peak RSS',
      'others on the machine',
    ],
    ...runs.map(({ config, run: r, cpu, range }) => [
      config.name,
      `${fmtInt(r.unique)}/${fmtInt(r.expected)}${r.duplicates > 0 ? `, ${fmtInt(r.duplicates)} dup` : ''}${r.anomalies > 0 ? `, ${fmtInt(r.anomalies)} anomalies` : ''}`,
      `${pct(r.compressedFrames, r.frames)} / ${pct(r.deltaFrames, r.frames)}`,
      `${fmtInt(perDelivery(r.wireBytes, r))}${ratio(perDelivery(r.wireBytes, r), base && perDelivery(base.run.wireBytes, base.run))}`,
      fmtInt(perDelivery(r.meanFrameBytes * r.frames, r)),
      `${cpu.toFixed(2)}${ratio(cpu, base?.cpu)}${range}`,
      perDelivery((r.clientCpu.userMs + r.clientCpu.systemMs) * 1_000, r).toFixed(2),
      `${fmtMs(r.latencyMs.p50)} / ${fmtMs(r.latencyMs.p99)}`,
      fmtBytes(r.memory.peakRss),
      `${r.othersCpuPct.toFixed(0)} % of a core`,
    ]),
  ]);
}

/** Every config of one plan, interleaved per repetition: slow drifts of a shared machine hit every config alike. */
async function runPlan(ctx: RunContext, p: Plan, o: BandwidthOptions): Promise<string> {
  const title = `${p.title}; ${fmtInt(p.events)} events at ${p.rate}/s`;
  ctx.log(`\n## ${title}\n`);
  const corpus = prepareEvents(p.events, ctx.route, ctx.channelPrefix, o.listings);
  const runs = await inRounds(o.repeat, o.configs, async (config, rep) => {
    ctx.log(`  ${config.name} (${config.what})${roundTag(rep, o.repeat)} …`);
    const spec = withWorkers(o.common, {
      sockets: o.sockets,
      plan: p.plan,
      events: p.events,
      ratePerSecond: p.rate,
      drainTimeoutMs: drainTimeoutMs(o.common, 60_000),
      stallTimeoutMs: 10_000,
      idleMs: 500,
      wire: config.wire,
    });
    const run = await runStack(config.stack ?? 'ours', spec, { ...ctx, corpus, gatewayEnv: { ...ctx.gatewayEnv, ...config.gatewayEnv } });
    ctx.log(
      `    ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(perDelivery(run.wireBytes, run))} wire B/delivery, ` +
        `${serverUsPerDelivery(run).toFixed(2)} µs server CPU/delivery, ${pct(run.deltaFrames, run.frames)} deltas, ${pct(run.compressedFrames, run.frames)} deflated`,
    );
    if (run.errorSamples.length > 0) ctx.log(`    errors: ${run.errorSamples.join(' | ')}`);
    return { config, run };
  });
  const table = resultTable(runs, o.repeat);
  ctx.log(`\n${table}`);
  return `### ${title}\n\n${table}\n`;
}

function bandwidthOptionsOf(options: OptionValues, common: CommonOptions): BandwidthOptions {
  const sockets = options.positiveInt('bandwidth-sockets');
  const listings = options.positiveInt('bandwidth-listings');
  const configs = options
    .required('bandwidth-configs')
    .split(',')
    .map((name) => {
      const config = CONFIGS.find((c) => c.name === name.trim() && c.stack !== 'ours-base');
      if (!config) throw new RangeError(`--bandwidth-configs: unknown "${name}"; choose from plain, deflate, delta, deflate+delta`);
      return config;
    });
  if (common.baseGateway !== undefined) configs.unshift(CONFIGS[0] as Config);
  const filterKeys = Array.from({ length: listings }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
  const plans: Readonly<Record<string, Plan>> = {
    shared: {
      title: `shared: ${fmtInt(sockets)} sockets on one operation (every field of ListingEvent), events of ${listings} listings interleaved`,
      plan: { mix: parseMix('shared:100'), filterKeys },
      events: options.positiveInt('bandwidth-events'),
      rate: options.positiveInt('bandwidth-rate'),
    },
    filtered: {
      title: `filtered: ${fmtInt(sockets)} sockets, each following one of ${listings} listings (listingUpdated(listing_id), every field): the same object again and again`,
      plan: { mix: parseMix('filtered:100'), filterKeys },
      events: options.positiveInt('bandwidth-filtered-events'),
      rate: options.positiveInt('bandwidth-filtered-rate'),
    },
  };
  const chosen = options
    .required('bandwidth-plans')
    .split(',')
    .map((name) => {
      const plan = plans[name.trim()];
      if (!plan) throw new RangeError(`--bandwidth-plans: unknown "${name}"; choose from ${Object.keys(plans).join(', ')}`);
      return plan;
    });
  return { sockets, listings, configs, plans: chosen, repeat: common.repeat, common };
}

export const bandwidthScenario: Scenario = {
  name: 'bandwidth',
  description:
    'opt-in: wire bytes and server CPU per delivery of our gateway plain, with permessage-deflate, in delta mode and both ' +
    '(with --base-gateway also the base build plain), interleaved with --repeat',
  report: 'bandwidth',
  options: {
    'bandwidth-sockets': { arg: 'N', default: '4000', quick: '500', help: 'sockets' },
    'bandwidth-configs': { arg: 'LIST', default: 'plain,deflate,delta,deflate+delta', help: 'configs (deflate = GATEWAY_COMPRESSION=shared)' },
    'bandwidth-plans': { arg: 'LIST', default: 'shared,filtered', help: 'plans: shared (one operation), filtered (each socket one listing)' },
    'bandwidth-events': { arg: 'E', default: '200', quick: '40', help: 'shared plan: events published' },
    'bandwidth-rate': { arg: 'EV/S', default: '10', quick: '20', help: 'shared plan: events per second' },
    'bandwidth-filtered-events': { arg: 'E', default: '1000', quick: '100', help: 'filtered plan: events published' },
    'bandwidth-filtered-rate': { arg: 'EV/S', default: '100', help: 'filtered plan: events per second' },
    'bandwidth-listings': { arg: 'L', default: '10', help: 'distinct listings in the events; the filtered plan follows each of them' },
  },
  prepare(options, common) {
    const o = bandwidthOptionsOf(options, common);
    // Bandwidth prepares its own events (its own number of listings): the shared corpus needs none for it.
    return {
      events: 0,
      run: async (env) => {
        const sections: string[] = [];
        for (const p of o.plans) sections.push(await runPlan(env.ctx, p, o));
        return { markdown: `## Bandwidth: bytes and server CPU per delivery\n\n${HOW_TO_READ}\n\n${sections.join('\n')}`, svgs: [] };
      },
    };
  },
};
