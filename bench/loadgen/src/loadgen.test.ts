import { describe, expect, it } from 'vitest';
import { createLoadgen, type LoadgenOptions } from './loadgen.js';
import { parseMix } from './operations.js';

// Option checks fail before any worker is forked: these tests start no process.
const base = { sockets: 10, plan: { mix: parseMix('shared:100'), filterKeys: [] }, maxEvents: 10, clockOffsetUs: 0 };

describe('createLoadgen targets', () => {
  it('refuses url and urls together, and neither', () => {
    const both = { ...base, url: 'ws://127.0.0.1:4000/graphql', urls: ['ws://127.0.0.1:4001/graphql'] } satisfies LoadgenOptions;
    expect(() => createLoadgen(both)).toThrow(/either url .* or urls/);
    expect(() => createLoadgen(base)).toThrow(/either url .* or urls/);
  });

  it('refuses an empty urls list', () => {
    expect(() => createLoadgen({ ...base, urls: [] })).toThrow(/at least one server/);
  });

  it('checks every url of urls: loopback ws:// only', () => {
    expect(() => createLoadgen({ ...base, urls: ['ws://127.0.0.1:4001/graphql', 'ws://10.0.0.1:4002/graphql'] })).toThrow(/loopback/);
    expect(() => createLoadgen({ ...base, urls: ['wss://127.0.0.1:4001/graphql'] })).toThrow(/ws:\/\//);
  });
});
