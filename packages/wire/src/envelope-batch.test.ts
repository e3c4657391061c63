import { describe, expect, it } from 'vitest';
import { createEnvelopeBatchAssembler, decodeEnvelope, encodeEnvelope, encodeEnvelopeBatch, EnvelopeError, isEnvelopeBatchPart, parseEnvelopeBatchPart, routingKeyText, type EnvelopeRoute } from './index.js';

const envelope = (offset: number, key: string): string => encodeEnvelope({ topic: 't', partition: 3, offset: String(offset), key, ts: 1 }, `{"n":${offset},"s":"a\\nb"}`);

/** A chunk of offsets 10…15 whose events sit on shards 2, 0, 2, 1, 0, 2: parts interleave in offsets. */
function chunkParts(from = 10) {
  const shards = [2, 0, 2, 1, 0, 2];
  const texts = shards.map((_, i) => envelope(from + i, `k${i}`));
  const parts = encodeEnvelopeBatch(3, shards.map((_, i) => String(from + i)), shards, texts.map((x) => Buffer.from(x)));
  return { texts, parts: parts.map((p) => ({ wire: `ws:t:${p.shard}`, text: p.bytes.toString('utf8') })) };
}

describe('batch parts (one PUBLISH per shard per chunk)', () => {
  it('encodes one part per shard with events, ascending, each naming the chunk and its events', () => {
    const { texts, parts } = chunkParts();
    expect(parts.map((p) => p.wire)).toEqual(['ws:t:0', 'ws:t:1', 'ws:t:2']);
    expect(parts[0]?.text).toBe(`{"v":2,"p":3,"l":"15","n":6,"s":[0,1,2],"i":[1,4],"o":["11","14"]}\n${texts[1]}\n${texts[4]}`);
    const part = parseEnvelopeBatchPart(parts[2]?.text as string);
    expect(part).toEqual({ partition: 3, last: '15', count: 6, shards: [0, 1, 2], indexes: [0, 2, 5], offsets: ['10', '12', '15'], envelopes: [texts[0], texts[2], texts[5]], routedOn: undefined, routingKeys: undefined });
    // The envelopes inside are ordinary v1 envelopes (an escaped newline in a payload stays escaped).
    expect(decodeEnvelope(part.envelopes[0] as string).payload).toEqual({ n: 10, s: 'a\nb' });
    expect(isEnvelopeBatchPart(parts[0]?.text as string)).toBe(true);
    expect(isEnvelopeBatchPart(texts[0] as string)).toBe(false);
  });

  it('carries each event routing key when given the chunk routing, and the assembler hands it on with the envelope', () => {
    const shards = [2, 0, 2, 1, 0, 2];
    const offsets = shards.map((_, i) => String(10 + i));
    const texts = shards.map((_, i) => envelope(10 + i, `k${i}`));
    const keys = ['lst-0', 'lst-"1"', null, 'lst-3', '42', null];
    const parts = encodeEnvelopeBatch(3, offsets, shards, texts.map((x) => Buffer.from(x)), undefined, { on: 'listing_id', keys });
    const first = parts[0]?.bytes.toString('utf8') as string;
    expect(first.slice(0, first.indexOf('\n'))).toBe('{"v":2,"p":3,"l":"15","n":6,"s":[0,1,2],"i":[1,4],"o":["11","14"],"r":"listing_id","k":["lst-\\"1\\"","42"]}');
    expect(parseEnvelopeBatchPart(parts[2]?.bytes.toString('utf8') as string)).toMatchObject({ routedOn: 'listing_id', routingKeys: ['lst-0', null, null] });
    const out: [number, EnvelopeRoute | undefined][] = [];
    const assembler = createEnvelopeBatchAssembler({ emit: (_channel, text, route) => out.push([Number(decodeEnvelope(text).offset), route]), listens: () => true, onMalformed: () => undefined });
    for (const part of parts) assembler.message(`ws:t:${part.shard}`, 't', part.bytes.toString('utf8'));
    const route = (offset: number, key: string): EnvelopeRoute => ({ partition: 3, offset: String(offset), on: 'listing_id', key });
    expect(out).toEqual([[10, route(10, 'lst-0')], [11, route(11, 'lst-"1"')], [12, undefined], [13, route(13, 'lst-3')], [14, route(14, '42')], [15, undefined]]);
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":0,"l":"5","n":1,"s":[0],"i":[0],"o":["5"],"k":["a"]}\n{}')).toThrow('batch part r must name the key field');
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":0,"l":"5","n":1,"s":[0],"i":[0],"o":["5"],"r":"id","k":[1]}\n{}')).toThrow('batch part k must list a routing key');
  });

  it('routingKeyText: what a gateway compares, or null where a number is not in its shortest form', () => {
    expect(['lst-1', '', 'a b', '42', '-7', '4.2', '0', '007', '1.'].map(routingKeyText)).toEqual(['lst-1', '', 'a b', '42', '-7', '4.2', '0', '007', '1.']);
    expect(['4.20', '1e3', '-0', '12345678901234567890', '9007199254740993'].map(routingKeyText)).toEqual([null, null, null, null, null]);
    expect(routingKeyText(undefined)).toBeNull();
  });

  it('writes each part inside a frame when given one (the same bytes, one buffer with the frame around them)', () => {
    const shards = [2, 0, 2, 1, 0, 2];
    const offsets = shards.map((_, i) => String(10 + i));
    // Large enough for parts of their own buffers (over 4 KiB), non-ASCII inside and in the frame.
    const envelopes = shards.map((_, i) => Buffer.from(envelope(10 + i, `k${i}-ü`.repeat(400))));
    const plain = encodeEnvelopeBatch(3, offsets, shards, envelopes);
    const heads: [number, number][] = [];
    const framed = encodeEnvelopeBatch(3, offsets, shards, envelopes, {
      head: (shard, length) => {
        heads.push([shard, length]);
        return `<ü${shard}:${length}>`;
      },
      tail: '</é>',
    });
    expect(heads).toEqual(plain.map((p) => [p.shard, p.bytes.length]));
    framed.forEach((part, k) => {
      const reference = plain[k];
      expect(part.shard).toBe(reference?.shard);
      expect(part.bytes.equals(reference?.bytes as Buffer)).toBe(true);
      expect(part.framed?.toString('utf8')).toBe(`<ü${part.shard}:${part.bytes.length}>${reference?.bytes.toString('utf8')}</é>`);
      // A view of the framed buffer: no copy of the part.
      expect(part.bytes.buffer).toBe(part.framed?.buffer);
    });
    expect(plain.every((p) => p.framed === undefined)).toBe(true);
  });

  it('rejects a malformed part, naming the field', () => {
    expect(() => parseEnvelopeBatchPart('{"v":2,')).toThrow(EnvelopeError);
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":0,"l":"5","n":2,"s":[0],"i":[0,1],"o":["4","5"]}\n{}')).toThrow('holds 1 envelopes, its head lists 2');
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":0,"l":"5","n":2,"s":[0],"i":[1,0],"o":["4","5"]}\n{}\n{}')).toThrow('batch part i must be ascending indexes below n');
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":0,"l":5,"n":2,"s":[0],"i":[0],"o":["4"]}\n{}')).toThrow('batch part l must be an offset');
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":-1,"l":"5","n":2,"s":[0],"i":[0],"o":["4"]}\n{}')).toThrow('batch part p must be a partition number');
    expect(() => parseEnvelopeBatchPart('{"v":2,"p":0,"l":"5","n":2,"s":[0],"i":[0],"o":[4]}\n{}')).toThrow('batch part o must list an offset');
  });
});

describe('createEnvelopeBatchAssembler', () => {
  function assembler(listens: (wire: string) => boolean = () => true, waitMs = 20, confirmed?: (wire: string) => boolean, stallMs?: number) {
    const out: [string, number][] = [];
    const malformed: string[] = [];
    const a = createEnvelopeBatchAssembler({
      emit: (channel, text) => out.push([channel, Number(decodeEnvelope(text).offset)]),
      listens,
      onMalformed: (channel, text) => malformed.push(`${channel} ${text}`),
      waitMs,
      ...(confirmed ? { confirmed } : {}),
      ...(stallMs === undefined ? {} : { stallMs }),
    });
    return { a, out, malformed };
  }

  it('hands a chunk on in offset order once every part it listens to arrived, each event under its channel', () => {
    const { a, out } = assembler();
    const { parts } = chunkParts();
    for (const p of parts.slice(0, 2)) a.message(p.wire, `logical:${p.wire}`, p.text);
    expect(out).toEqual([]); // shard 2's part is still to come
    a.message(parts[2]?.wire as string, `logical:${parts[2]?.wire as string}`, parts[2]?.text as string);
    expect(out).toEqual([
      ['logical:ws:t:2', 10],
      ['logical:ws:t:0', 11],
      ['logical:ws:t:2', 12],
      ['logical:ws:t:1', 13],
      ['logical:ws:t:0', 14],
      ['logical:ws:t:2', 15],
    ]);
  });

  it('waits only for the shards it listens to', () => {
    const { a, out } = assembler((wire) => wire !== 'ws:t:1');
    const { parts } = chunkParts();
    a.message('ws:t:2', 'ws:t:2', parts[2]?.text as string);
    a.message('ws:t:0', 'ws:t:0', parts[0]?.text as string);
    expect(out.map(([, o]) => o)).toEqual([10, 11, 12, 14, 15]);
  });

  it('hands on an incomplete chunk when the next chunk of the partition starts or after waitMs; forgets it on discard (the connection is gone)', async () => {
    const { a, out } = assembler();
    const first = chunkParts(10).parts;
    const second = chunkParts(16).parts;
    a.message('ws:t:0', 'ws:t:0', first[0]?.text as string);
    a.message('ws:t:0', 'ws:t:0', second[0]?.text as string);
    expect(out.map(([, o]) => o)).toEqual([11, 14]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(out.map(([, o]) => o)).toEqual([11, 14, 17, 20]);
    const third = chunkParts(22).parts;
    a.message('ws:t:1', 'ws:t:1', third[1]?.text as string);
    a.discard();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(out.map(([, o]) => o)).toEqual([11, 14, 17, 20]);
  });

  it('waits past waitMs for parts on confirmed channels (a late loop turn runs timers before it reads them), up to stallMs', async () => {
    const { a, out } = assembler(() => true, 20, (wire) => wire !== 'ws:t:2', 500);
    const { parts } = chunkParts(10);
    a.message('ws:t:0', 'ws:t:0', parts[0]?.text as string);
    await new Promise((resolve) => setTimeout(resolve, 60)); // the loop was away longer than waitMs
    // On a busy machine both timers may fire in one late turn; the give-up runs in that turn's check phase.
    await new Promise((resolve) => setImmediate(resolve));
    // Shard 2's subscribe was not confirmed: its part is given up; shard 1's is confirmed: still awaited.
    expect(out).toEqual([]);
    a.message('ws:t:1', 'ws:t:1', parts[1]?.text as string);
    expect(out.map(([, o]) => o)).toEqual([11, 13, 14]);
    // A confirmed part that never comes (its channel left meanwhile) holds the chunk at most stallMs.
    const next = chunkParts(16).parts;
    a.message('ws:t:0', 'ws:t:0', next[0]?.text as string);
    a.message('ws:t:2', 'ws:t:2', next[2]?.text as string);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(out.map(([, o]) => o)).toEqual([11, 13, 14]);
    await new Promise((resolve) => setTimeout(resolve, 520));
    expect(out.map(([, o]) => o)).toEqual([11, 13, 14, 16, 17, 18, 20, 21]);
  });

  it('keeps two ingests redoing a partition apart (a rebalance): interleaved parts of overlapping chunks each arrive whole', () => {
    const { a, out } = assembler();
    // The old owner's chunk 10…15 and the new owner's redo 12…17 (other boundaries), parts interleaved.
    const old = chunkParts(10).parts;
    const redo = chunkParts(12).parts;
    for (let i = 0; i < 3; i++) {
      a.message(old[i]?.wire as string, old[i]?.wire as string, old[i]?.text as string);
      a.message(redo[i]?.wire as string, redo[i]?.wire as string, redo[i]?.text as string);
    }
    // Each chunk is handed on whole and in offset order; the gateway's position dedup drops the overlap.
    expect(out.map(([, o]) => o)).toEqual([10, 11, 12, 13, 14, 15, 12, 13, 14, 15, 16, 17]);
  });

  it('hands on no incomplete chunk while paused (its missing parts wait unread in the socket); waits waitMs again after resume', async () => {
    const { a, out } = assembler();
    const { parts } = chunkParts(10);
    a.message('ws:t:0', 'ws:t:0', parts[0]?.text as string);
    a.pause();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(out).toEqual([]);
    a.resume();
    a.message('ws:t:1', 'ws:t:1', parts[1]?.text as string);
    a.message('ws:t:2', 'ws:t:2', parts[2]?.text as string);
    expect(out.map(([, o]) => o)).toEqual([10, 11, 12, 13, 14, 15]);
    a.message('ws:t:0', 'ws:t:0', chunkParts(16).parts[0]?.text as string);
    a.pause();
    a.resume();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(out.map(([, o]) => o)).toEqual([10, 11, 12, 13, 14, 15, 17, 20]);
  });

  it('keeps partitions and layouts apart, passes single envelopes through, drops a malformed part', () => {
    const { a, out, malformed } = assembler();
    const { parts } = chunkParts();
    const other = encodeEnvelopeBatch(4, ['15'], [0], [Buffer.from(envelope(15, 'x'))]);
    a.message('ws:t:0', 'ws:t:0', parts[0]?.text as string);
    a.message('ws:{t:4}:0', 'ws:t:0', other[0]?.bytes.toString('utf8') as string);
    a.message('ws:t:5', 'ws:t:5', envelope(99, 'y'));
    a.message('ws:t:5', 'ws:t:5', '{"v":2,"p":0}');
    expect(out.map(([, o]) => o)).toEqual([15, 99]);
    expect(malformed).toEqual(['ws:t:5 {"v":2,"p":0}']);
  });
});
