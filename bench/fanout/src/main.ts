#!/usr/bin/env node
/**
 * The fan-out benchmark's runner. Every stack runs as its own process on a free port, against the
 * same private redis-server, with the same load client, N and events; one stack at a time. The
 * scenarios (scenarios.ts) declare their options; this file parses them, runs the chosen
 * scenarios in registry order and writes one report.
 *
 *   pnpm bench                        full run (< 10 min), writes bench/results/fanout.md + SVGs
 *   pnpm bench -- --quick             smoke run (N=500, seconds), prints only
 *   node dist/main.js --scenarios scale                      1 × 19,000 and 3 × 17,000 sockets → fanout-scale.md
 *   node dist/main.js --scenarios saturation --stacks ours,ours-no-metrics --repeat 4 --report metrics-overhead
 *   node dist/main.js --scenarios bandwidth                  plain vs deflate vs delta → bandwidth.md (guard, tracing, snapshot, sse-lag alike)
 *   node dist/main.js --help                                 every scenario and option
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Redis } from 'ioredis';
import { createBenchClock } from '@wirestream/loadgen';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { startRedis } from '@wirestream/testkit';
import { loadAverageText } from '@wirestream/bench-kit';
import { profilesIn, summarizeProfile } from './profile-summary.js';
import { prepareEvents } from './publisher.js';
import { fmtBytes } from './report.js';
import { reportHeader } from './report-file.js';
import type { RunContext, StackRun } from './run-stack.js';
import { createOptionValues, helpLines, parseDeclared, type OptionSpecs, type OptionValues, type Scenario, type ScenarioOutput } from './scenario.js';
import { DEFAULT_SCENARIOS, SCENARIOS } from './scenarios.js';
import { LISTINGS, readCommon, RUNNER_OPTIONS } from './runner-options.js';
import { parseEnvList } from './variants.js';

function helpText(): string {
  return [
    'fan-out bench: ours vs naive vs card stack (same run, same N, same events)',
    'usage: node bench/fanout/dist/main.js [--scenarios LIST] [options]',
    '',
    'runner options:',
    ...helpLines(RUNNER_OPTIONS, '  '),
    '',
    `scenarios (run in this order; default ${DEFAULT_SCENARIOS}):`,
    ...SCENARIOS.flatMap((s) => [`  ${s.name.padEnd(14)} ${s.description}${s.report ? ` → ${s.report}.md` : ''}`, ...helpLines(s.options, '      ')]),
    '',
    'benches measured in one process (the hub, the compiler, the projector): node bench/fanout/dist/micro.js --help',
  ].join('\n');
}

/** Every declared option once, as node:util's parseArgs wants them. */
function allOptionSpecs(): OptionSpecs {
  const all: Record<string, OptionSpecs[string]> = { ...RUNNER_OPTIONS };
  for (const s of SCENARIOS) {
    for (const [name, spec] of Object.entries(s.options)) {
      if (name in all) throw new Error(`option --${name} is declared twice (scenario ${s.name}): options must be unique`);
      all[name] = spec;
    }
  }
  return all;
}

function chosenScenarios(o: OptionValues): Scenario[] {
  const names = o.required('scenarios').split(',');
  for (const n of names) if (!SCENARIOS.some((s) => s.name === n)) throw new RangeError(`unknown scenario "${n}": use ${SCENARIOS.map((s) => s.name).join(', ')}`);
  return SCENARIOS.filter((s) => names.includes(s.name));
}

/** The report's base name: --report, else the chosen scenarios' own report when they share one. */
function reportBaseOf(o: OptionValues, chosen: readonly Scenario[]): string {
  const reports = new Set(chosen.map((s) => s.report ?? 'fanout'));
  const base = o.string('report') ?? (reports.size === 1 ? [...reports][0] ?? 'fanout' : 'fanout');
  if (!/^[A-Za-z0-9_.-]+$/.test(base)) throw new RangeError(`--report must be a plain file name (letters, digits, _ . -), got "${base}"`);
  return base;
}

async function main(): Promise<void> {
  const specs = allOptionSpecs();
  const { values, positionals } = parseDeclared(specs);
  if (positionals.length > 0) throw new RangeError(`unexpected argument "${positionals.join(' ')}": every option is --name (see --help)`);
  if (values['help'] === true) {
    console.log(helpText());
    return;
  }
  const quick = values['quick'] === true;
  const options = createOptionValues(specs, values, quick);
  const common = readCommon(options);
  const chosen = chosenScenarios(options);
  // Every scenario reads and checks its options before anything starts.
  const prepared = chosen.map((s) => ({ scenario: s, ...s.prepare(options, common) }));
  const reportBase = reportBaseOf(options, chosen);
  const reportName = `${reportBase}${quick ? '-quick' : ''}`;
  /** NAME-chart.svg, or NAME.svg when the report is already named after the chart (fanout-scale). */
  const svgName = (chart: string): string => `${reportBase.endsWith(chart) ? reportBase : `${reportBase}-${chart}`}${quick ? '-quick' : ''}.svg`;
  const outDir = options.flag('no-write') ? undefined : options.string('out') ?? (quick ? undefined : new URL('../../results/', import.meta.url).pathname);
  const log = (line: string): void => console.log(line);
  const wallStart = Date.now();
  const loadAtStart = loadAverageText();

  const schema = loadWirestreamSchema(auctionSchemaPath);
  const route = schema.routes.get('listingUpdated');
  if (!route) throw new Error('the auction schema has no listingUpdated route');
  const corpus = prepareEvents(Math.max(1, ...prepared.map((p) => p.events)), route, 'ws', LISTINGS);

  const gatewayEnv = parseEnvList(options.string('gateway-env') ?? '');
  const outputs: ScenarioOutput[] = [];
  const runsOf = new Map<string, readonly StackRun[]>();
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  try {
    const profileDir = options.string('cpu-prof');
    const profiled = new Set(options.required('cpu-prof-stacks').split(','));
    const ctx: RunContext = {
      redisUrl: redisServer.url,
      redis,
      corpus,
      route,
      channelPrefix: 'ws',
      clock: createBenchClock(),
      log,
      redisPid: redisServer.pid,
      nodeEnv: options.required('node-env'),
      gatewayEnv,
      nodeArgs: (stack) => (profileDir !== undefined && profiled.has(stack) ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    };
    log(`redis-server pid ${String(redisServer.pid)} on ${redisServer.url}; mean envelope ${fmtBytes(corpus.meanEnvelopeBytes)}`);
    for (const p of prepared) {
      const output = await p.run({ ctx, schema, common, svgName });
      outputs.push(output);
      if (output.runs) runsOf.set(p.scenario.name, output.runs);
    }
  } finally {
    redis.disconnect();
    await redisServer.stop();
  }

  // Scenarios sharing a targets function (field and saturation) get its lines once, on top.
  const targetFns = new Set(chosen.flatMap((s) => (s.targets ? [s.targets] : [])));
  const targets = [...targetFns].flatMap((f) => f(runsOf));
  const sections = outputs.map((o) => o.markdown);
  if (targets.length > 0) {
    const body = targets.map((t) => `- ${t}`).join('\n');
    log(`\n## Targets\n\n${body}\n`);
    sections.unshift(`## Targets (this run)\n\n${body}\n`);
  }
  const profileDir = options.string('cpu-prof');
  if (profileDir !== undefined) {
    for (const file of profilesIn(profileDir)) log(`\nCPU profile ${file} (self time):\n${summarizeProfile(file).join('\n')}`);
  }
  const minutes = ((Date.now() - wallStart) / 60_000).toFixed(1);
  log(`\nwall time ${minutes} min`);
  if (!outDir) return;
  mkdirSync(outDir, { recursive: true });
  const header = reportHeader({
    reportBase,
    quick,
    loadAtStart,
    minutes,
    corpus,
    listings: LISTINGS,
    nodeEnv: options.required('node-env'),
    gatewayEnv: options.string('gateway-env'),
    baseGateway: common.baseGateway,
    baseNode: options.string('base-node'),
  });
  writeFileSync(join(outDir, `${reportName}.md`), `${header}\n${sections.join('\n')}`);
  const svgs = outputs.flatMap((o) => o.svgs);
  for (const [name, svg] of svgs) writeFileSync(join(outDir, name), svg);
  log(`wrote ${relative(process.cwd(), outDir) || '.'}/${reportName}.md and ${svgs.length} SVG(s)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
