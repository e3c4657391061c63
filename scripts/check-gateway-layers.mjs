// Checks docs/architecture.md's list of the gateway's layers (between <!-- gateway-layers -->
// markers) against apps/gateway/src: every source file (tests aside) is listed once, under its
// folder, and nothing listed is missing from the tree. The descriptions are the doc's own; the
// names are the tree's.
//   node scripts/check-gateway-layers.mjs   exit 1 with what differs (the test command runs it)
// Format inside the markers' code block: a folder line ends with `/`, a file line starts with its
// name; indentation (two spaces a level) says which folder a line belongs to.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'apps/gateway/src');
const doc = join(root, 'docs/architecture.md');
const block = /<!-- gateway-layers -->\n```\n([\s\S]*?)```\n<!-- \/gateway-layers -->/.exec(readFileSync(doc, 'utf8'));
if (!block) fail(['docs/architecture.md: no <!-- gateway-layers --> block with a code block inside']);

/** @param {string} dir @returns {string[]} */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(src, path)] : [];
  });
}

/** @param {string} text @returns {string[]} paths relative to apps/gateway/src */
function listed(text) {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const [first, ...rest] = lines;
  if (first?.trim() !== 'apps/gateway/src/') fail([`the block must start with "apps/gateway/src/", got "${first}"`]);
  /** @type {string[]} */
  const folders = [];
  const paths = [];
  for (const line of rest) {
    const depth = (line.length - line.trimStart().length) / 2 - 1;
    const name = line.trim().split(/\s+/)[0] ?? '';
    if (!Number.isInteger(depth) || depth < 0 || depth > folders.length) fail([`bad indentation (two spaces a level): "${line}"`]);
    folders.length = depth;
    if (name.endsWith('/')) folders.push(name.slice(0, -1));
    else if (name.endsWith('.ts')) paths.push([...folders, name].join('/'));
    else fail([`a line names a folder (ending in /) or a .ts file first: "${line}"`]);
  }
  return paths;
}

/** @param {string[]} problems */
function fail(problems) {
  console.error(`docs/architecture.md's gateway layers differ from apps/gateway/src:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}

const inTree = new Set(sources(src));
const inDoc = listed(block[1]);
const problems = [
  ...[...inTree].filter((path) => !inDoc.includes(path)).map((path) => `not listed: ${path}`),
  ...inDoc.filter((path) => !inTree.has(path)).map((path) => `listed but not in the tree: ${path}`),
  ...inDoc.filter((path, i) => inDoc.indexOf(path) !== i).map((path) => `listed twice: ${path}`),
];
if (problems.length > 0) fail(problems);
console.log(`docs/architecture.md lists the gateway's ${inTree.size} source files where they are`);
