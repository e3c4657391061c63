// The envelope head on ingest's hot path (decision 0025): CPU per head of the encoder before
// headers existed (copied here verbatim as the baseline), of today's encoder for a topic without
// `@topic(headers:)` (called as chunk-builder calls it, with the record's headers), and for a topic
// that copies two headers from records that carry them. Interleaved rounds, medians, one process.
//   node bench/ingest/dist/envelope-head.js [--heads 1000000] [--rounds 9]
import { createEnvelopeHeadEncoder, type EnvelopeHeadEncoder } from '@wirestream/wire';
import { median, parseCli } from '@wirestream/bench-kit';

const { values: args } = parseCli({ options: { heads: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '9' } } });
const HEADS = Number(args.heads);
const ROUNDS = Number(args.rounds);

/** createEnvelopeHeadEncoder as it was before decision 0025. */
function baseEncoder(topic: string): EnvelopeHeadEncoder {
  const start = '{"v":1,"topic":' + JSON.stringify(topic) + ',"partition":';
  return (partition, offset, key, ts, trace) => {
    const head = start + partition + ',"offset":"' + offset + '","key":' + (key === null ? 'null' : JSON.stringify(key)) + ',"ts":' + ts;
    return trace === undefined ? head + ',"payload":' : head + trace + ',"payload":';
  };
}

// Records as kafkajs hands them over: headers as Buffers (a producer's traceparent on none of them).
const offsets = Array.from({ length: 1024 }, (_, i) => String(1_000_000 + i));
const keys = Array.from({ length: 1024 }, (_, i) => `lst-${i % 97}`);
const plainHeaders = Array.from({ length: 1024 }, () => ({}));
const tenantHeaders = Array.from({ length: 1024 }, (_, i) => ({ tenant: Buffer.from(`partner-${i % 7}`), 'event-type': Buffer.from(i % 2 === 0 ? 'BidPlaced' : 'ListingUpdated') }));

function cpuNsPerHead(encode: EnvelopeHeadEncoder, headers: readonly Record<string, Buffer>[]): number {
  let bytes = 0;
  const started = process.cpuUsage();
  // Deliberately imperative: the loop is what is measured.
  for (let i = 0; i < HEADS; i++) {
    const j = i & 1023;
    bytes += encode(j & 7, offsets[j] as string, keys[j] as string, 1_700_000_000_000 + i, undefined, headers[j]).length;
  }
  const used = process.cpuUsage(started);
  if (bytes === 0) throw new Error('nothing encoded');
  return ((used.user + used.system) * 1000) / HEADS;
}

const variants: readonly { readonly name: string; readonly encode: EnvelopeHeadEncoder; readonly headers: readonly Record<string, Buffer>[] }[] = [
  { name: 'base: encoder before decision 0025', encode: baseEncoder('listing-events'), headers: plainHeaders },
  { name: 'topic without @topic(headers:)', encode: createEnvelopeHeadEncoder('listing-events'), headers: plainHeaders },
  { name: 'topic without headers, records with headers', encode: createEnvelopeHeadEncoder('listing-events'), headers: tenantHeaders },
  { name: '@topic(headers: ["tenant", "event-type"]), both present', encode: createEnvelopeHeadEncoder('listing-events', ['tenant', 'event-type']), headers: tenantHeaders },
];

const samples = variants.map(() => [] as number[]);
for (let round = 0; round < ROUNDS + 1; round++) {
  for (const [i, variant] of variants.entries()) {
    const ns = cpuNsPerHead(variant.encode, variant.headers);
    if (round > 0) (samples[i] as number[]).push(ns); // round 0 warms up
  }
}
const base = median(samples[0] as number[]);
console.log(`| variant | CPU ns/head (median of ${ROUNDS}) | range | vs base |`);
console.log('|---|---:|---:|---:|');
for (const [i, variant] of variants.entries()) {
  const values = samples[i] as number[];
  console.log(`| ${variant.name} | ${median(values).toFixed(1)} | ${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)} | ${(median(values) / base).toFixed(2)}× |`);
}
