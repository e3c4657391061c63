import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// pnpm links workspace packages into node_modules, but Node resolves symlinks to the real path, so
// walking up from this module (src/ or dist/) always reaches the repo, whatever the caller's cwd.
const here = dirname(fileURLToPath(import.meta.url));
let cached: string | undefined;

/**
 * Finds the Wirestream repo root: the nearest folder at or above `fromDir` that holds
 * `pnpm-workspace.yaml`. Used to locate `infra/` scripts regardless of the test's cwd.
 *
 * @param fromDir - where to start looking. @default the folder of this module
 * @throws when no folder up to the filesystem root holds `pnpm-workspace.yaml`
 */
export function findRepoRoot(fromDir?: string): string {
  if (fromDir === undefined && cached !== undefined) return cached;
  const start = resolve(fromDir ?? here);
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) break;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error(
        `findRepoRoot: no pnpm-workspace.yaml in ${start} or any folder above it; ` +
          'run from inside the Wirestream checkout or pass its path as fromDir',
      );
    }
    dir = parent;
  }
  if (fromDir === undefined) cached = dir;
  return dir;
}
