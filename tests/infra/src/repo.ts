import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** Absolute path of the repository root. */
export const repoRoot: string = fileURLToPath(new URL('../../../', import.meta.url));

/** Absolute path of a file or folder given relative to the repository root. */
export function repoPath(...parts: string[]): string {
  return join(repoRoot, ...parts);
}

/** Text of a file given relative to the repository root. */
export function readRepoFile(...parts: string[]): string {
  return readFileSync(repoPath(...parts), 'utf8');
}

/** Root package.json devDependencies: the pinned toolchain (pnpm, turbo, typescript, …). */
export function rootDevDependencies(): Readonly<Record<string, string>> {
  const manifest = JSON.parse(readRepoFile('package.json')) as { devDependencies?: Record<string, string> };
  return manifest.devDependencies ?? {};
}
