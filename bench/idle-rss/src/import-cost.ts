#!/usr/bin/env node
/**
 * Import cost of modules, each in a fresh Node process: RSS (and V8 heap) after two forced GCs,
 * before and after `import()` of the module. Also an app's entry: every module its dist/main.js
 * imports statically, without running main.js itself (which would read config and connect).
 *
 *   node bench/idle-rss/dist/import-cost.js [--repeat 3] [--root <worktree>] <spec>…
 *
 * A spec is `<package dir>:<module>` (resolved as that package resolves it, e.g.
 * `packages/telemetry:@opentelemetry/core`) or `entry:<app>` (apps/<app>/dist/main.js's imports).
 * Prints one JSON line per spec: median ΔRSS, ΔheapTotal, ΔheapUsed (MiB) over the repeats.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { median, MiB, parseCli, positiveInt, requireGc } from '@wirestream/bench-kit';

const { values, positionals } = parseCli({
  allowPositionals: true,
  options: { repeat: { type: 'string', default: '3' }, root: { type: 'string', default: process.cwd() }, child: { type: 'boolean', default: false } },
  help: { child: 'internal: the measuring child process' },
});

/** What a child measured: the deltas over the import, and the RSS after it. */
interface ChildRun {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly rssAfter: number;
}

/** In the child: baseline after GC, import, GC again. */
async function measureChild(urls: readonly string[]): Promise<ChildRun> {
  const gc = requireGc();
  const settle = async (): Promise<NodeJS.MemoryUsage> => {
    for (let i = 0; i < 3; i++) {
      gc();
      await sleep(20);
    }
    return process.memoryUsage();
  };
  const before = await settle();
  for (const url of urls) await import(url);
  const after = await settle();
  return { rss: after.rss - before.rss, heapTotal: after.heapTotal - before.heapTotal, heapUsed: after.heapUsed - before.heapUsed, rssAfter: after.rss };
}

const root = resolve(values.root);

/** A module as the package in `dir` resolves it (its node_modules, its conditions: import). */
function resolveFrom(dir: string, module: string): string {
  const probe = pathToFileURL(join(dir, 'package.json')).href;
  return execFileSync(process.execPath, ['--experimental-import-meta-resolve', '--no-warnings', '--input-type=module', '-e', `process.stdout.write(import.meta.resolve(${JSON.stringify(module)}, ${JSON.stringify(probe)}))`], { encoding: 'utf8' });
}

/** The file URLs a spec stands for. */
function urlsOf(spec: string): string[] {
  const where = spec.slice(0, spec.indexOf(':'));
  const module = spec.slice(spec.indexOf(':') + 1);
  if (where !== 'entry') return [resolveFrom(join(root, where), module)];
  const dist = join(root, 'apps', module, 'dist');
  const text = readFileSync(join(dist, 'main.js'), 'utf8');
  const specifiers = [...text.matchAll(/^import\s+(?:[^'"]+\s+from\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[1] as string);
  return specifiers.map((s) => (s.startsWith('.') ? pathToFileURL(resolve(dist, s)).href : resolveFrom(join(root, 'apps', module), s)));
}

if (values.child) {
  process.stdout.write(JSON.stringify(await measureChild(positionals)) + '\n');
  process.exit(0);
}
const repeat = positiveInt('repeat', values.repeat);
for (const spec of positionals) {
  const urls = urlsOf(spec);
  const runs: ChildRun[] = [];
  for (let i = 0; i < repeat; i++) {
    const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', ...urls], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
    runs.push(JSON.parse(out) as ChildRun);
  }
  const f = (k: keyof ChildRun): number => Number((median(runs.map((r) => r[k])) / MiB).toFixed(1));
  process.stdout.write(JSON.stringify({ spec, rssMiB: f('rss'), heapTotalMiB: f('heapTotal'), heapUsedMiB: f('heapUsed'), rssAfterMiB: f('rssAfter'), runsRssMiB: runs.map((r) => Number((r.rss / MiB).toFixed(1))) }) + '\n');
}
