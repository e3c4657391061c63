/**
 * The facts a result file starts with: when, on which node and machine, under which load (the
 * machine is shared: other tenants' work lands in every CPU figure) and by which command.
 */
import { execFileSync } from 'node:child_process';
import { relative } from 'node:path';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { findRepoRoot } from '@wirestream/testkit';
import { loadAverages } from './proc.js';

/** `2 cores (AMD EPYC 7B13)`. */
export function coresText(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'})`;
}

/** RAM of the machine in GiB, rounded. */
export function totalMemGiB(): number {
  return Math.round(os.totalmem() / 2 ** 30);
}

/** `node v24.1.0[, linux 6.8.0], 2 cores (…), 8 GiB`. */
export function machineText({ platform = false }: { platform?: boolean } = {}): string {
  return `node ${process.version}${platform ? `, ${os.platform()} ${os.release()}` : ''}, ${coresText()}, ${totalMemGiB()} GiB`;
}

/** The command that ran this bench, as one would type it at the repository root: `node bench/x/dist/main.js --flag`. */
export function commandLine(): string {
  const script = process.argv[1] === undefined ? '?' : relative(findRepoRoot(), process.argv[1]);
  return `node ${script}${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
}

/**
 * The gateway a bench measured: the last commit touching apps/gateway in `checkout`, whether the tree
 * differs from it, and the checkout's HEAD.
 */
export function gatewayVersion(checkout: string = findRepoRoot()): string {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', cwd: checkout }).trim();
    } catch {
      return '';
    }
  };
  const commit = git('log', '-1', '--format=%h %s', '--', 'apps/gateway');
  const dirty = git('status', '--porcelain', '--', 'apps/gateway') !== '';
  const head = git('rev-parse', '--short', 'HEAD');
  return commit === '' ? 'unknown (not a git checkout)' : `${commit}${dirty ? ' + uncommitted changes' : ''} (checkout at ${head})`;
}

export interface QuietWait {
  /** Whether the 1-minute load went below the bound before the deadline. */
  readonly reached: boolean;
  readonly waitedMs: number;
  /** The 1-minute load at each poll, first to last. */
  readonly polls: readonly number[];
}

export interface QuietWaitOptions {
  /** Start once the 1-minute load average is below this. */
  readonly maxLoad: number;
  /** Give up (and run anyway) after this. */
  readonly maxWaitMs: number;
  /** @default 30_000 (30 seconds) */
  readonly pollMs?: number;
  readonly log: (line: string) => void;
}

/**
 * Waits for a quiet machine: the machine is shared (2 cores) and other tenants' work shows up in
 * every CPU figure. Never fails: a machine that stays busy is run on anyway, and the results say so.
 */
export async function waitForQuietMachine({ maxLoad, maxWaitMs, pollMs = 30_000, log }: QuietWaitOptions): Promise<QuietWait> {
  const started = Date.now();
  const polls: number[] = [];
  for (;;) {
    const [load] = loadAverages();
    polls.push(load);
    const waitedMs = Date.now() - started;
    if (load < maxLoad) return { reached: true, waitedMs, polls };
    if (waitedMs + pollMs > maxWaitMs) {
      log(`  1-minute load still ${load.toFixed(2)} after ${(waitedMs / 60_000).toFixed(1)} min: running anyway (the results say so)`);
      return { reached: false, waitedMs, polls };
    }
    log(`  1-minute load ${load.toFixed(2)} ≥ ${maxLoad}: waiting ${pollMs / 1_000} s (${(waitedMs / 60_000).toFixed(1)} of ${maxWaitMs / 60_000} min)`);
    await sleep(pollMs);
  }
}
