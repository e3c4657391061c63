#!/usr/bin/env node
// The fast lane's bench smoke: turbo's `bench:smoke` task of a bench package runs this in the
// package's folder (scripts/test-fast.sh runs it for the affected ones). Every script of the package
// that the docs name (`bench/<package>/dist/<file>.js` in README.md, docs/ and bench/**/README.md)
// must start and print its options (`--help`, exit 0): its imports resolve and its options parse.
// Then the package's smallest real runs, given as arguments (one command line each), must finish
// (exit 0) within a minute: seconds of work, not the minutes of a measurement.
//   node ../../scripts/bench-smoke.mjs ['node dist/x.js --rounds 1' …]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const pkg = basename(process.cwd());
const named = new Set();
const docs = [join(root, 'README.md'), ...markdownIn(join(root, 'docs')), ...markdownIn(join(root, 'bench'))];
const pattern = new RegExp(`bench/${pkg}/dist/([\\w.-]+\\.js)`, 'g');
for (const file of docs) for (const match of readFileSync(file, 'utf8').matchAll(pattern)) named.add(match[1]);

let failed = 0;
const check = (what, command, args, timeout) => {
  const started = Date.now();
  const run = spawnSync(command, args, { encoding: 'utf8', timeout, maxBuffer: 16 * 1024 * 1024 });
  const ok = run.status === 0 && (run.stdout.trim() !== '' || run.stderr.trim() !== '');
  if (!ok) failed++;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what} (${seconds} s)`);
  if (!ok) console.log(`${run.error?.message ?? ''}${run.stdout}${run.stderr}`.trim().split('\n').slice(-20).join('\n'));
};
for (const file of [...named].sort()) {
  const path = join('dist', file);
  if (!existsSync(path)) {
    failed++;
    console.log(`FAIL ${path}: named in the docs, not built (a script that moved? a missing build?)`);
    continue;
  }
  check(`${path} --help`, process.execPath, [path, '--help'], 30_000);
}
for (const line of process.argv.slice(2)) check(line, '/bin/sh', ['-c', line], 60_000);
console.log(`bench smoke ${pkg}: ${named.size} named script(s), ${process.argv.length - 2} run(s), ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

function markdownIn(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...markdownIn(path));
    else if (entry.endsWith('.md') && relative(root, path) !== '') out.push(path);
  }
  return out;
}
