import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findRepoRoot } from '@wirestream/testkit';

const patchesDir = fileURLToPath(new URL('../patches/', import.meta.url));

/**
 * Builds a copy of apps/ingest with `patches/<name>.diff` applied (in order) under
 * `.wirestream/bench-ingest-<names>/` (git-ignored) and returns its `dist/main.js`. The app
 * itself is never modified: this is how the bench measures a change it proposes.
 */
export function buildPatchedApp(patches: readonly string[]): string {
  const root = findRepoRoot();
  const app = join(root, 'apps', 'ingest');
  // Two levels below the root, so the copy's `extends: ../../tsconfig.base.json` still resolves.
  const dir = join(root, '.wirestream', `bench-ingest-${patches.join('+')}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const entry of ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(app, entry), join(dir, entry), { recursive: true });
  }
  // The app's own dependencies (@wirestream/*, kafkajs, ioredis), resolved as the app resolves them.
  symlinkSync(join(app, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const patch of patches) {
    // Patches are written against the repo root (a/apps/ingest/src/...): strip a/apps/ingest/.
    execFileSync('patch', ['--quiet', '--forward', '-p3', '-d', dir, '-i', join(patchesDir, `${patch}.diff`)], { stdio: 'inherit' });
  }
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.build.json')], { stdio: 'inherit' });
  return join(dir, 'dist', 'main.js');
}
