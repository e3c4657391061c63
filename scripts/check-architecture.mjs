// Enforces the dependency rules that keep the architecture visible:
//   - apps never import other apps; packages never import apps;
//   - workspace packages are imported only through their public entry (no deep imports).
// Scans the TypeScript sources of apps/*, packages/* and tests/*; prints every violation.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const importRe = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const apps = new Set(readdirSync(join(root, 'apps')).map((name) => `@wirestream/${name}`));
const problems = [];

function* sources(dir) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|tsx)$/.test(entry) && !entry.endsWith('.d.ts')) yield path;
  }
}

for (const area of ['apps', 'packages', 'tests']) {
  for (const unit of readdirSync(join(root, area))) {
    const self = `@wirestream/${unit}`;
    for (const file of sources(join(root, area, unit))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(importRe)) {
        const spec = match[1] ?? match[2];
        if (!spec?.startsWith('@wirestream/')) continue;
        const [scope, name, ...rest] = spec.split('/');
        const target = `${scope}/${name}`;
        const where = relative(root, file);
        if (target === self) continue;
        if (apps.has(target) && area !== 'tests') {
          problems.push(`${where}: imports ${spec} — ${area === 'apps' ? 'apps never import each other' : 'packages never import apps'}`);
        }
        if (rest.length > 0 && !rest.join('/').endsWith('.graphql')) {
          problems.push(`${where}: deep import ${spec} — import ${target} through its entry point`);
        }
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`architecture rules broken (${problems.length}):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('architecture rules hold');
