/**
 * Heap death (issue 18, the field's "Reached heap limit Allocation failed"): our gateway with
 * `NODE_OPTIONS=--max-old-space-size=256` inside a 512 MiB memory budget (memory-budget.ts, the
 * pod's limit), through the saturation and burst scenarios, with its queue bounds as shipped and
 * without them (inbound queue bound very large, slow-consumer limit at its maximum). Records
 * whether the process died and how (exit code or signal, "heap limit" in its log, OOM kills in
 * the budget), its RSS over time, and whether every event reached every socket.
 */
import { markdownTable } from '@wirestream/bench-kit';
import { fmtInt, fmtMb, fmtMs } from './report.js';
import type { RunContext, RunSpec, StackRun } from './run-stack.js';
import { createMemoryBudget } from './memory-budget.js';
import { STACK_SHORT, type StackName } from './servers.js';
import { parseEnvList, runVariant } from './variants.js';

export interface HeapLimitOptions {
  readonly budgetBytes: number;
  readonly oldSpaceMb: number;
  /** Env that lifts the bounds (`NAME=VALUE,…`). */
  readonly unboundedEnv: string;
}

export const DEFAULT_UNBOUNDED_ENV = 'GATEWAY_INBOUND_MAX_BYTES=1073741824,GATEWAY_MAX_BACKPRESSURE_BYTES=268435456';

export interface HeapLimitRow {
  readonly stack: StackName;
  readonly scenario: string;
  readonly bounds: 'as shipped' | 'lifted';
  readonly budget: string;
  /** Undefined when the run could not complete (e.g. the server died before it was ready). */
  readonly run: StackRun | undefined;
  readonly error: string | undefined;
  readonly cgroupPeakBytes: number | undefined;
  readonly oomKills: number | undefined;
}

/** Every gateway stack × scenario × bounds, each in a fresh budget. */
export async function runHeapLimit(
  ctx: RunContext,
  stacks: readonly StackName[],
  scenarios: readonly { name: string; spec: RunSpec }[],
  options: HeapLimitOptions,
): Promise<HeapLimitRow[]> {
  const rows: HeapLimitRow[] = [];
  const nodeOptions = `--max-old-space-size=${options.oldSpaceMb}`;
  let n = 0;
  for (const { name, spec } of scenarios) {
    for (const bounds of ['as shipped', 'lifted'] as const) {
      for (const stack of stacks) {
        const env = { NODE_OPTIONS: nodeOptions, ...(bounds === 'lifted' ? parseEnvList(options.unboundedEnv) : {}) };
        const budget = createMemoryBudget(options.budgetBytes, `wirestream-bench-${process.pid}-${++n}`);
        const budgetText = typeof budget === 'string' ? `none (${budget})` : budget.description;
        ctx.log(`  ${STACK_SHORT[stack]}, ${name}, bounds ${bounds}, ${nodeOptions}, budget ${typeof budget === 'string' ? 'none' : `${fmtMb(options.budgetBytes)} MB`} …`);
        let run: StackRun | undefined;
        let error: string | undefined;
        try {
          run = await runVariant(stack, spec, ctx, env, typeof budget === 'string' ? undefined : budget.procsFile);
        } catch (err) {
          error = (err instanceof Error ? err.message : String(err)).split('\n').slice(0, 6).join(' ⏎ ');
        }
        const row: HeapLimitRow = {
          stack,
          scenario: name,
          bounds,
          budget: budgetText,
          run,
          error,
          cgroupPeakBytes: typeof budget === 'string' ? undefined : budget.peakBytes(),
          oomKills: typeof budget === 'string' ? undefined : budget.oomKills(),
        };
        if (typeof budget !== 'string') budget.remove();
        rows.push(row);
        ctx.log(`    ${verdictOf(row)}`);
      }
    }
  }
  return rows;
}

const HEAP_LIMIT_LOG = /heap limit|heap out of memory/i;

/** died / survived, with how. */
function verdictOf(row: HeapLimitRow): string {
  const { run } = row;
  if (!run) return `did not complete: ${row.error ?? 'unknown error'}`;
  const heapDeath = HEAP_LIMIT_LOG.test(run.serverTail);
  const oom = (row.oomKills ?? 0) > 0;
  const died =
    run.serverExit === undefined
      ? 'survived'
      : `**died** (${run.serverExit}${heapDeath ? ', "heap limit" in its log' : ''}${oom ? ', OOM-killed by the budget' : ''})`;
  return `${died}; ${fmtInt(run.unique)}/${fmtInt(run.expected)} delivered, ${fmtInt(run.duplicates)} duplicates, peak RSS ${fmtMb(run.memory.peakRss)} MB`;
}

export function heapLimitTable(rows: readonly HeapLimitRow[]): string {
  const out: string[][] = [
    ['stack', 'scenario', 'bounds', 'outcome', 'peak RSS MB', 'budget peak MB', 'OOM kills', 'delivered / expected', 'dup', 'sockets closed by server', 'deliveries/s', 'p99'],
  ];
  for (const row of rows) {
    const r = row.run;
    const codes = r ? Object.entries(r.closeCodes).map(([c, k]) => `${fmtInt(k)}× ${c}`).join(', ') : '';
    out.push([
      STACK_SHORT[row.stack],
      row.scenario,
      row.bounds,
      verdictOf(row).split(';')[0] as string,
      fmtMb(r?.memory.peakRss),
      fmtMb(row.cgroupPeakBytes),
      row.oomKills === undefined ? 'n/a' : fmtInt(row.oomKills),
      r ? `${fmtInt(r.unique)} / ${fmtInt(r.expected)}` : 'n/a',
      r ? fmtInt(r.duplicates) : 'n/a',
      r ? `${fmtInt(r.closedByServer)}${codes ? ` (${codes})` : ''}` : 'n/a',
      r ? fmtInt(r.deliveriesPerSec) : 'n/a',
      r ? fmtMs(r.latencyMs.p99) : 'n/a',
    ]);
  }
  return markdownTable(out);
}

/** The last log lines of each run that died, for the report. */
export function deathLogs(rows: readonly HeapLimitRow[]): string[] {
  return rows
    .filter((row) => row.run?.serverExit !== undefined && row.run.serverTail !== '')
    .map((row) => {
      const lines = (row.run as StackRun).serverTail.split('\n');
      // V8's own words first ("FATAL ERROR: Reached heap limit …"), then the start of its stack.
      const fatal = lines.findIndex((l) => HEAP_LIMIT_LOG.test(l));
      const shown = fatal >= 0 ? lines.slice(Math.max(0, fatal - 4), fatal + 8) : lines.slice(-12);
      return `${STACK_SHORT[row.stack]}, ${row.scenario}, bounds ${row.bounds}:\n\n\`\`\`\n${shown.join('\n')}\n\`\`\``;
    });
}
