// The gateway runs on uWebSockets.js's native addon or not at all (decision 0034): a JavaScript stand-in
// (some builds fall back to `ws` with a console.warn) passes a smoke test and is several times slower.
// main.ts imports this module FIRST: ES modules run in import order, so the check runs before any module
// that imports uWebSockets.js, and a missing addon ends the start with exit 78 and one line, not a stack.
import { EXIT_CONFIG } from '@wirestream/config';
import { createRequire } from 'node:module';

const FIX = 'run Node.js 24 with the set-up\'s uWebSockets.js (source scripts/bootstrap.sh && bootstrap; on glibc < 2.38 it adds a three-symbol shim, decision 0034) or the gateway image';

/** Why uWebSockets.js is not the native addon for this Node ABI, or undefined when it is. */
export function nativeUwsProblem(): string | undefined {
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const runtime = `Node.js ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch})`;
  const require = createRequire(import.meta.url);
  let uws: { App?: unknown };
  try {
    uws = require('uWebSockets.js') as { App?: unknown };
  } catch (err) {
    // uWS wraps the loader's error in a paragraph about supported versions: its last line is the cause.
    const lines = (err instanceof Error ? err.message : String(err)).split('\n').filter((l) => l.trim() !== '');
    return `uWebSockets.js did not load its native addon ${binary} on ${runtime}: ${(lines.at(-1) ?? 'unknown error').replace(/\.$/, '')}; fix: ${FIX}`;
  }
  const addon = Object.keys(require.cache).some((path) => path.endsWith(binary));
  if (!addon || typeof uws.App !== 'function' || !Function.prototype.toString.call(uws.App).includes('[native code]')) {
    return `uWebSockets.js loaded without its native addon ${binary} on ${runtime} (a JavaScript stand-in); fix: ${FIX}`;
  }
  return undefined;
}

const problem = nativeUwsProblem();
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(EXIT_CONFIG);
}
