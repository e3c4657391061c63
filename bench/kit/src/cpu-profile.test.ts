import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { frameLabel, readCpuProfile } from './cpu-profile.js';

const dir = mkdtempSync(join(tmpdir(), 'cpu-profile-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const url = 'file:///repo/node_modules/.pnpm/kafkajs@2.2.4/node_modules/kafkajs/src/x.js';
const profile = {
  nodes: [
    { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2] },
    { id: 2, callFrame: { functionName: 'fetch', url, lineNumber: 11 }, children: [3] },
    { id: 3, callFrame: { functionName: '', url: '', lineNumber: -1 } },
  ],
  startTime: 1_000,
  endTime: 1_100,
  samples: [2, 3, 2],
  timeDeltas: [10, 30, 20],
};

describe('readCpuProfile', () => {
  it('gives each node the time until the next sample, its frame and its parent', () => {
    const file = join(dir, 'a.cpuprofile');
    writeFileSync(file, JSON.stringify(profile));
    const { selfUs, frameOf, parentOf } = readCpuProfile(file);
    // Samples at 1,010 (2), 1,040 (3), 1,060 (2); the last lasts until endTime 1,100.
    expect(selfUs.get(2)).toBe(30 + 40);
    expect(selfUs.get(3)).toBe(20);
    expect(parentOf(3)).toBe(2);
    expect(parentOf(1)).toBeUndefined();
    expect(frameLabel(frameOf(2) ?? { functionName: '', url: '', lineNumber: 0 })).toBe('fetch kafkajs/src/x.js:12');
    expect(frameLabel(frameOf(3) ?? { functionName: 'x', url: '', lineNumber: 0 })).toBe('(anonymous)');
  });
});
