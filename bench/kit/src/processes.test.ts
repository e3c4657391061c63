import { describe, expect, it } from 'vitest';
import { startNodeProcess } from './processes.js';
import { readCpuMs, readRssBytes, readSchedCpuMs } from './proc.js';

describe('startNodeProcess', () => {
  it('waits for a log line, reads the process in /proc, and stops it', async () => {
    const script = 'console.log(JSON.stringify({ msg: "ready" })); setInterval(() => {}, 1000);';
    const proc = startNodeProcess('sleeper', ['-e', script], { env: { BENCH_KIT_TEST: '1' } });
    await proc.waitForLine('ready', 10_000);
    expect(readRssBytes(proc.pid)).toBeGreaterThan(1_000_000);
    expect(readCpuMs(proc.pid)).toBeGreaterThanOrEqual(0);
    expect(readSchedCpuMs(proc.pid)).toBeGreaterThan(0);
    await proc.stop();
    expect(proc.exitInfo()).toBe('signal SIGTERM');
    expect(readRssBytes(proc.pid)).toBeUndefined();
  });

  it('rejects a wait with the output when the process exits first', async () => {
    const proc = startNodeProcess('crasher', ['-e', 'console.error("boom"); process.exit(3)']);
    await expect(proc.waitForLine(/never/, 10_000)).rejects.toThrow(/crasher exited \(code 3\)[\s\S]*boom/);
  });
});
