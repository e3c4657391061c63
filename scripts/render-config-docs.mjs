// Renders the configuration tables of docs/configuration.md from the apps' config specs (the single
// definition), between <!-- config:NAME --> markers. `--check` fails if the page is stale.
// Needs the apps built (dist/).
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const { renderConfigTable } = await import(`${root}packages/config/dist/index.js`);
const specs = {
  ingest: (await import(`${root}apps/ingest/dist/config.js`)).ingestConfigSpec,
  gateway: (await import(`${root}apps/gateway/dist/config.js`)).gatewayConfigSpec,
  'demo-producer': (await import(`${root}apps/demo/dist/config.js`)).producerConfigSpec,
  'demo-sellers': (await import(`${root}apps/demo/dist/config.js`)).sellersConfigSpec,
};
const page = 'docs/configuration.md';
const readmePath = `${root}${page}`;
const readme = readFileSync(readmePath, 'utf8');
let next = readme;
for (const [name, spec] of Object.entries(specs)) {
  const re = new RegExp(`(<!-- config:${name} -->\\n)[\\s\\S]*?(<!-- /config:${name} -->)`);
  if (!re.test(next)) throw new Error(`${page} has no <!-- config:${name} --> … <!-- /config:${name} --> block`);
  next = next.replace(re, `$1${renderConfigTable(spec)}\n$2`);
}
if (process.argv.includes('--check')) {
  if (next !== readme) {
    console.error(`${page}: the configuration tables are stale: run node scripts/render-config-docs.mjs`);
    process.exit(1);
  }
  console.log(`${page}: the configuration tables match the config specs`);
} else {
  writeFileSync(readmePath, next);
  console.log(`${page}: configuration tables rendered`);
}
