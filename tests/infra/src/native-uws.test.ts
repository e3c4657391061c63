// uWebSockets.js as the set-up leaves it on this host (decision 0034): the binary for this Node ABI asks
// the host's glibc for nothing it lacks, it loads as the native addon, and a gateway that cannot load it
// refuses to start instead of running on a stand-in.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoPath } from './repo.js';

const EXIT_CONFIG = 78;
const binaryName = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
const uwsDir = dirname(createRequire(repoPath('apps/gateway/package.json')).resolve('uWebSockets.js'));
const binary = join(uwsDir, binaryName);
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;

/** `2.36` vs `2.38`, numerically. */
function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number)) as [number[], number[]];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** GLIBC_x.y versions the binary's version-needs section names, with readelf's flags (`none`, `WEAK`). */
function glibcNeeds(): { version: string; weak: boolean }[] {
  const out = execFileSync('readelf', ['--version-info', '--wide', binary], { encoding: 'utf8' });
  return [...out.matchAll(/Name: GLIBC_([\d.]+)\s+Flags: (\S+)/g)].map((m) => ({ version: m[1] as string, weak: (m[2] as string).includes('WEAK') }));
}

/** Dynamic symbols still bound to a GLIBC_x.y version, as objdump lists undefined ones. */
function versionedImports(): { symbol: string; version: string }[] {
  const out = execFileSync('objdump', ['--dynamic-syms', binary], { encoding: 'utf8' });
  return [...out.matchAll(/\*UND\*\s+\S+\s+(?:\()?GLIBC_([\d.]+)\)?\s+(\S+)/g)].map((m) => ({ version: m[1] as string, symbol: m[2] as string }));
}

describe.runIf(process.platform === 'linux' && glibc !== undefined)(`uWebSockets.js ${binaryName} on glibc ${glibc}`, () => {
  it('exists for this Node ABI', () => {
    expect(existsSync(binary), `${binary} missing: run source scripts/bootstrap.sh && bootstrap`).toBe(true);
  });

  it('needs no glibc version newer than the host has, except weak ones', () => {
    const tooNew = glibcNeeds().filter((n) => !n.weak && compareVersions(n.version, glibc as string) > 0);
    expect(tooNew, `this host has glibc ${glibc}; run the set-up (decision 0034)`).toEqual([]);
  });

  it('imports no symbol by a glibc version newer than the host has', () => {
    const tooNew = versionedImports().filter((i) => compareVersions(i.version, glibc as string) > 0);
    expect(tooNew).toEqual([]);
  });

  it('loads as the native addon (the .node file for this ABI, native functions)', () => {
    const script = [
      `const require = (await import('node:module')).createRequire(${JSON.stringify(repoPath('apps/gateway/package.json'))});`,
      `const uws = require('uWebSockets.js');`,
      `const file = Object.keys(require.cache).find((k) => k.endsWith(${JSON.stringify(binaryName)}));`,
      `console.log(JSON.stringify({ file, native: Function.prototype.toString.call(uws.App).includes('[native code]') }));`,
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ file: binary, native: true });
  });
});

describe('the built gateway without the native addon', () => {
  it('refuses to start: exit 78, one line naming the cause and the fix, no stack', () => {
    // --no-addons: Node refuses every native addon, as a wrong ABI or a missing binary would.
    const main = repoPath('apps/gateway/dist/main.js');
    const env = { PATH: process.env['PATH'] ?? '', GATEWAY_PORT: '0', REDIS_URL: 'redis://127.0.0.1:1', GATEWAY_AUTH_MODE: 'anonymous' };
    const run = spawnSync(process.execPath, ['--no-addons', main], { env, encoding: 'utf8', timeout: 20_000 });
    expect(run.status, run.stderr).toBe(EXIT_CONFIG);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^uWebSockets\\.js did not load its native addon ${binaryName.replace(/\./g, '\\.')} on Node\\.js ${process.version.replace(/\./g, '\\.')} `));
    expect(lines[0]).toContain('loading addons is disabled');
    expect(lines[0]).toContain('fix: run Node.js 24');
    expect(lines[0]).toContain('bootstrap');
    expect(run.stdout).toBe(''); // refused before the config, the logger or any listener
  });
});
