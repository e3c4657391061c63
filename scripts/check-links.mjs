// Checks every relative link of the repository's Markdown files: the file it names exists and,
// for a `#fragment` into a Markdown file, that file has a heading with that anchor (GitHub's slugs).
// Web links are not fetched. Exits non-zero listing each broken link with its file and line.
//   node scripts/check-links.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file && existsSync(join(root, file)));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(path) {
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of readFileSync(path, 'utf8').matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

const LINK = /\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const broken = [];
for (const file of files) {
  let fenced = false;
  readFileSync(join(root, file), 'utf8').split('\n').forEach((line, index) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(LINK)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const [pathPart, fragment] = target.split('#');
      const path = pathPart ? resolve(dirname(join(root, file)), decodeURIComponent(pathPart)) : join(root, file);
      const where = `${file}:${index + 1}: ${target}`;
      if (!existsSync(path)) broken.push(`${where} (no such file)`);
      else if (fragment && path.endsWith('.md') && !anchorsOf(path).has(fragment.toLowerCase())) broken.push(`${where} (no heading #${fragment})`);
    }
  });
}
if (broken.length > 0) {
  console.error(`${broken.length} broken link(s):\n  ${broken.join('\n  ')}`);
  process.exit(1);
}
console.log(`links: ${files.length} Markdown files, every relative link resolves`);
