// Renders the configuration tables of the README from the apps' config specs (the single
// definition), between <!-- config:NAME --> markers. `--check` fails if the README is stale.
// Needs the apps built (dist/).
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const { renderConfigTable } = await import(`${root}packages/config/dist/index.js`);
const specs = {
  ingest: (await import(`${root}apps/ingest/dist/config.js`)).ingestConfigSpec,
  gateway: (await import(`${root}apps/gateway/dist/config.js`)).gatewayConfigSpec,
  'demo-producer': (await import(`${root}apps/demo/dist/config.js`)).producerConfigSpec,
};
const readmePath = `${root}README.md`;
const readme = readFileSync(readmePath, 'utf8');
let next = readme;
for (const [name, spec] of Object.entries(specs)) {
  const re = new RegExp(`(<!-- config:${name} -->\\n)[\\s\\S]*?(<!-- /config:${name} -->)`);
  if (!re.test(next)) throw new Error(`README.md has no <!-- config:${name} --> … <!-- /config:${name} --> block`);
  next = next.replace(re, `$1${renderConfigTable(spec)}\n$2`);
}
if (process.argv.includes('--check')) {
  if (next !== readme) {
    console.error('README.md configuration tables are stale: run node scripts/render-config-docs.mjs');
    process.exit(1);
  }
  console.log('README configuration tables match the config specs');
} else {
  writeFileSync(readmePath, next);
  console.log('README configuration tables rendered');
}
