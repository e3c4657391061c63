// Import cost of modules, each in a fresh Node process: RSS (and V8 heap) after two forced GCs,
// before and after `import()` of the module. Also an app's entry: every module its dist/main.js
// imports statically, without running main.js itself (which would read config and connect).
//
//   node bench/idle-rss/import-cost.mjs [--repeat 3] [--root <worktree>] <spec>…
//
// A spec is `<package dir>:<module>` (resolved as that package resolves it, e.g.
// `packages/telemetry:@opentelemetry/sdk-trace`) or `entry:<app>` (apps/<app>/dist/main.js's imports).
// Prints one JSON line per spec: median ΔRSS, ΔheapTotal, ΔheapUsed (MiB) over the repeats.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
// Not a workspace package (plain scripts): the bench kit by path, built (turbo run build).
import { median, MiB, parseCli } from '../kit/dist/index.js';

const { values, positionals } = parseCli({ allowPositionals: true, options: { repeat: { type: 'string', default: '3' }, root: { type: 'string', default: process.cwd() }, child: { type: 'boolean', default: false } } });

if (values.child) {
  // In the child: baseline after GC, import, GC again.
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const urls = positionals;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    return process.memoryUsage();
  };
  const before = await settle();
  for (const url of urls) await import(url);
  const after = await settle();
  process.stdout.write(JSON.stringify({ rss: after.rss - before.rss, heapTotal: after.heapTotal - before.heapTotal, heapUsed: after.heapUsed - before.heapUsed, rssAfter: after.rss }) + '\n');
  process.exit(0);
}

const root = resolve(values.root);
/** The file URLs a spec stands for. */
function urlsOf(spec) {
  const [where, module] = [spec.slice(0, spec.indexOf(':')), spec.slice(spec.indexOf(':') + 1)];
  if (where === 'entry') {
    const main = join(root, 'apps', module, 'dist', 'main.js');
    const text = readFileSync(main, 'utf8');
    const specifiers = [...text.matchAll(/^import\s+(?:[^'"]+\s+from\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    return specifiers.map((s) => (s.startsWith('.') ? pathToFileURL(resolve(join(root, 'apps', module, 'dist'), s)).href : resolveFrom(join(root, 'apps', module), s)));
  }
  return [resolveFrom(join(root, where), module)];
}
function resolveFrom(dir, module) {
  // import.meta.resolve from a file inside the package: its node_modules, its conditions (import).
  const probe = pathToFileURL(join(dir, 'package.json')).href;
  return execFileSync(process.execPath, ['--experimental-import-meta-resolve', '--no-warnings', '--input-type=module', '-e', `process.stdout.write(import.meta.resolve(${JSON.stringify(module)}, ${JSON.stringify(probe)}))`], { encoding: 'utf8' });
}
for (const spec of positionals) {
  const urls = urlsOf(spec);
  const runs = [];
  for (let i = 0; i < Number(values.repeat); i++) {
    const out = execFileSync(process.execPath, ['--expose-gc', new URL(import.meta.url).pathname, '--child', ...urls], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
    runs.push(JSON.parse(out));
  }
  const f = (k) => Number((median(runs.map((r) => r[k])) / MiB).toFixed(1));
  process.stdout.write(JSON.stringify({ spec, rssMiB: f('rss'), heapTotalMiB: f('heapTotal'), heapUsedMiB: f('heapUsed'), rssAfterMiB: f('rssAfter'), runsRssMiB: runs.map((r) => Number((r.rss / MiB).toFixed(1))) }) + '\n');
}
