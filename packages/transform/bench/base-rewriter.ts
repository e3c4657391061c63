/**
 * The byte rewriter of another checkout (the base of a change), for benches that compare a change
 * with its base in one run: `BENCH_BASE_DIR=<checkout with packages/transform built>` (e.g.
 * `git worktree add /tmp/base 85ea526 && (cd /tmp/base && source scripts/bootstrap.sh && bootstrap)`).
 * Loaded from that checkout's build instead of a copy kept in this tree.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface BaseRewriter {
  rewrite(value: Buffer, head: string, tail: string): Buffer;
}

/** The base checkout's `createJsonBytesRewriter(maxDepth, maxCacheEntries)`, or undefined without BENCH_BASE_DIR. */
export async function loadBaseRewriter(maxDepth: number, maxCacheEntries: number): Promise<BaseRewriter | undefined> {
  const dir = process.env['BENCH_BASE_DIR'];
  if (dir === undefined || dir === '') return undefined;
  const file = join(dir, 'packages', 'transform', 'dist', 'json-bytes-rewriter.js');
  const module = (await import(pathToFileURL(file).href)) as { createJsonBytesRewriter?: (depth: number, entries: number) => BaseRewriter };
  if (typeof module.createJsonBytesRewriter !== 'function') throw new Error(`BENCH_BASE_DIR=${dir}: ${file} has no createJsonBytesRewriter (build that checkout's packages/transform)`);
  return module.createJsonBytesRewriter(maxDepth, maxCacheEntries);
}
