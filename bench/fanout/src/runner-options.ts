/**
 * The fan-out runner's own options (which scenarios and stacks, repetitions, processes, where the
 * report goes) and the options every scenario shares, read once from them.
 */
import type { CommonOptions, OptionSpecs, OptionValues } from './scenario.js';
import { DEFAULT_SCENARIOS } from './scenarios.js';
import { STACK_LABELS, useBaseGateway, type StackName } from './servers.js';

/** The runner's own options: which scenarios and stacks, repetitions, processes, where the report goes. */
export const RUNNER_OPTIONS: OptionSpecs = {
  quick: { help: 'smoke run: small N, short traffic; prints only (unless --out)' },
  scenarios: { arg: 'LIST', default: DEFAULT_SCENARIOS, help: 'the scenarios below, comma-separated' },
  stacks: {
    arg: 'LIST',
    default: 'naive,card,ours,bare,bare-corked',
    help:
      'stacks for field/saturation (gateway stacks for burst, heap-limit, memory-return): also bare-projecting, ours-prod, ours-no-metrics ' +
      '(GATEWAY_METRICS=false), ours-sse (GraphQL over SSE), ours-legacy (subscriptions-transport-ws), ours-base(-sse) (with --base-gateway)',
  },
  repeat: { arg: 'K', default: '1', help: 'run the stacks K times, interleaved (ours, ours-no-metrics, ours, …): median and spread per stack' },
  'drain-timeout': { arg: 'S', help: 'stop waiting for deliveries this long after the last publish (default: each scenario its own, 20 s for most)' },
  workers: { arg: 'N', help: 'load worker processes (default: max(2, N/19000))' },
  'node-env': { arg: 'VALUE', default: 'production', help: 'NODE_ENV of every server process (graphql-js and graphql-ws check more in development)' },
  'base-gateway': { arg: 'DIR', help: 'another checkout (a built git worktree of the base commit) measured as stack ours-base' },
  'base-node': { arg: 'PATH', help: 'the node binary that runs ours-base (default: this one), for a runtime change' },
  'gateway-env': { arg: 'LIST', help: 'extra env for our gateway (NAME=VALUE,…; jemalloc), e.g. GATEWAY_MAX_PAYLOAD_BYTES=16384,GATEWAY_IDLE_TIMEOUT_SECONDS=120' },
  'cpu-prof': { arg: 'DIR', help: 'write a V8 CPU profile of each server process of --cpu-prof-stacks into DIR' },
  'cpu-prof-stacks': { arg: 'LIST', default: 'ours', help: 'the stacks --cpu-prof profiles' },
  out: { arg: 'DIR', help: 'where the report and its SVGs go (default: bench/results; none for --quick)' },
  report: { arg: 'NAME', help: "report file NAME.md, SVGs NAME-<scenario>.svg (default: the scenarios' own report when they share one, else fanout)" },
  'no-write': { help: 'print only' },
  help: { help: 'this text' },
};

/** The demo listings the events are spread over. */
export const LISTINGS = 50;

/** The runner's options every scenario shares; --base-gateway takes effect here (servers.ts). */
export function readCommon(o: OptionValues): CommonOptions {
  const stacks = o.required('stacks').split(',') as StackName[];
  for (const s of stacks) if (!(s in STACK_LABELS)) throw new RangeError(`unknown stack "${s}": use ${Object.keys(STACK_LABELS).join(', ')}`);
  const baseGateway = o.string('base-gateway');
  if (baseGateway !== undefined) useBaseGateway(baseGateway, o.string('base-node'));
  else if (stacks.includes('ours-base') || stacks.includes('ours-base-sse')) throw new RangeError('--stacks ours-base(-sse) needs --base-gateway <checkout with apps/gateway built>');
  const repeat = Number(o.string('repeat'));
  if (!Number.isInteger(repeat) || repeat < 1) throw new RangeError(`--repeat must be a positive integer, got ${o.string('repeat')}`);
  const quick = o.flag('quick');
  return {
    quick,
    stacks,
    repeat,
    workers: o.given('workers') ? o.number('workers') : undefined,
    drainOverrideMs: o.given('drain-timeout') ? o.number('drain-timeout') * 1_000 : undefined,
    idleMs: quick ? 500 : 2_000,
    baseGateway,
    filterKeys: Array.from({ length: LISTINGS }, (_, i) => `lst-${String(i).padStart(6, '0')}`),
  };
}

