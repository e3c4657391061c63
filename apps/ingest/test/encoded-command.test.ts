import { Command, Redis } from 'ioredis';
import { encodeEnvelopeBatch, historyBatchArgs } from '@wirestream/wire';
import { startRedis, type RedisServer } from '@wirestream/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCommand, encodeCommandPieces, publishHead, PUBLISH_TAIL, sendEncoded, sendEncodedBytes } from '../src/encoded-command.js';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
  await redis.connect();
});

afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

/** What ioredis itself writes for the same command (its own encoder: the reference). */
function ioredisBytes(name: string, args: (string | Buffer)[]): Buffer {
  const command = new Command(name, args);
  const writable = command.toWritable({});
  return Buffer.isBuffer(writable) ? writable : Buffer.from(writable, 'utf8');
}

describe('encodeCommand', () => {
  it('encodes exactly what ioredis writes for the same arguments (strings as UTF-8, buffers as they are, lengths of 0 to 5 digits)', () => {
    const samples: (string | Buffer)[][] = [
      ['ws:h:{t:3}', 'MINID', '~', '12-0', '20-1', 'c', 'ws:t:0', 'p', Buffer.from('{"v":2}\n{"v":1,"k":"Zürich"}')],
      ['kanal-ü', Buffer.alloc(0)],
      ['', Buffer.alloc(99_999, 0xff)],
      ['x'.repeat(9), 'y'.repeat(10), 'z'.repeat(100), Buffer.alloc(1_000, 0)],
    ];
    for (const args of samples) expect(encodeCommand('xadd', args).equals(ioredisBytes('xadd', args))).toBe(true);
  });

  it('in pieces: large buffers are their own pieces (the same memory, not copies), and the pieces join to what ioredis writes', () => {
    const part = Buffer.alloc(20_000, 0x61);
    const other = Buffer.alloc(30_000, 0x62);
    const samples: (string | Buffer)[][] = [
      ['ws:h:{t:3}', 'MINID', '~', '12-0', '20-1', 'c', 'ws:t:0', 'p', part],
      ['k', part, 'c', Buffer.from('small'), other, 'ü'],
      [part, other],
      ['only', 'strings', Buffer.from('and a small buffer')],
    ];
    for (const args of samples) {
      const pieces = encodeCommandPieces('xadd', args, 16_384);
      expect(Buffer.concat(pieces).equals(ioredisBytes('xadd', args))).toBe(true);
      const large = args.filter((a): a is Buffer => Buffer.isBuffer(a) && a.length >= 16_384);
      expect(pieces.filter((piece) => large.includes(piece))).toEqual(large);
      expect(pieces).toHaveLength(2 * large.length + 1);
    }
  });
});

describe('sendEncoded / sendEncodedBytes (real Redis)', () => {
  it('stores a batch XADD byte for byte and publishes a framed part, replies and errors as ioredis gives them', async () => {
    const parts = encodeEnvelopeBatch(3, ['7', '8', '9'], [0, 1, 0], ['{"v":1,"a":"é"}', '{"v":1,"b":2}', '{"v":1,"c":"\\u0000"}'].map((x) => Buffer.from(x)), {
      head: (shard, length) => publishHead(`ws:test:${shard}`, length),
      tail: PUBLISH_TAIL,
    });
    const args = historyBatchArgs('ws:h:test', '9', parts.map(({ shard, bytes }) => ({ channel: `ws:test:${shard}`, bytes })));
    // A large argument goes out as a piece of its own (written to the socket before the command's last piece).
    args.push('big', Buffer.alloc(40_000, 0x7a));
    await expect(sendEncoded(redis, 'xadd', args)).resolves.toBe('9-1');
    const stored = (await redis.xrangeBuffer('ws:h:test', '-', '+')) as [Buffer, Buffer[]][];
    expect(stored).toHaveLength(1);
    expect(stored[0]?.[1].map((b) => b.toString('latin1'))).toEqual(args.slice(2).map((a) => (typeof a === 'string' ? a : a.toString('latin1'))));

    const subscriber = new Redis(server.url);
    const received: string[] = [];
    subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => received.push(`${channel.toString()} ${message.toString('latin1')}`));
    await subscriber.subscribe('ws:test:0', 'ws:test:1');
    try {
      for (const { framed } of parts) await expect(sendEncodedBytes(redis, 'publish', framed as Buffer)).resolves.toBe(1);
      await expect.poll(() => received.length).toBe(2);
      expect(received).toEqual(parts.map(({ shard, bytes }) => `ws:test:${shard} ${bytes.toString('latin1')}`));
    } finally {
      subscriber.disconnect();
    }
    // An error reply rejects the command's promise, as with ioredis's own commands (the chunk is redone).
    await expect(sendEncoded(redis, 'xadd', args)).rejects.toThrow(/equal or smaller than the target stream top item/);
  });

  it('keeps commands in pieces in order with others when the socket is backed up (50 XADDs of 200 KB parts, not awaited in between)', async () => {
    const sent: Promise<unknown>[] = [];
    for (let n = 0; n < 50; n++) {
      const part = Buffer.alloc(200_000, 0x30 + (n % 10));
      sent.push(sendEncoded(redis, 'xadd', ['ws:h:order', `${n + 1}-0`, 'c', 'ch', 'p', part]));
      sent.push(redis.incr('ws:order:count'));
    }
    const replies = await Promise.all(sent);
    expect(replies.filter((_, i) => i % 2 === 0)).toEqual(Array.from({ length: 50 }, (_, n) => `${n + 1}-0`));
    expect(replies.filter((_, i) => i % 2 === 1)).toEqual(Array.from({ length: 50 }, (_, n) => n + 1));
    const stored = (await redis.xrangeBuffer('ws:h:order', '-', '+')) as [Buffer, Buffer[]][];
    expect(stored.map(([, fields]) => [fields[3]?.length, fields[3]?.[0], fields[3]?.[199_999]])).toEqual(
      Array.from({ length: 50 }, (_, n) => [200_000, 0x30 + (n % 10), 0x30 + (n % 10)]),
    );
  });
});
