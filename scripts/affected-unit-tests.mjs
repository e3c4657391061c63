// Prints the unit test files of the given project folders, one per line, for the fast lane
// (scripts/test-fast.sh). A unit test starts no server and no process: neither it nor any file it
// imports by a relative path imports @wirestream/testkit (the real Kafka, Redis and Schema Registry
// of the integration tests) or node:child_process (built apps, redis-server nodes, image builds).
// The rule is read from the code, so a new test file is classified by what it does, not by where
// it lives.
//   node scripts/affected-unit-tests.mjs packages/transform apps/gateway …
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const SERVER_IMPORT = /(?:from\s+|import\(\s*)['"](?:@wirestream\/testkit|node:child_process|child_process)['"]/;
const RELATIVE_IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** Test files under a project folder (node_modules and build output left out). */
function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (/\.test\.tsx?$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** The source file a relative specifier names (`./x.js` is `./x.ts` in the sources). */
function resolveSource(from, specifier) {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|tsx?)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Whether the file, or anything it reaches through relative imports, imports the testkit or child_process. */
function startsServers(file, seen = new Set()) {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  if (SERVER_IMPORT.test(text)) return true;
  for (const [, specifier] of text.matchAll(RELATIVE_IMPORT)) {
    const next = resolveSource(file, specifier);
    if (next && startsServers(next, seen)) return true;
  }
  return false;
}

for (const project of process.argv.slice(2)) {
  const dir = resolve(root, project);
  if (!existsSync(dir)) throw new Error(`affected-unit-tests: no project folder ${project}`);
  for (const file of testFiles(dir).sort()) {
    if (!startsServers(file)) console.log(relative(root, file));
  }
}
