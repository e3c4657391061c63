// A 64-bit integer beyond 2^53 − 1 (a `Long` from Avro, Protobuf or a JSON Schema int64) reaches the
// client with every digit (issue 33: the gateway's JSON.parse rounded 9223372036854775807 to
// 9223372036854776000). The frames' text is read as it came: a JSON client would round it again.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeEnvelope, shardOf } from '@wirestream/wire';
import { waitFor } from '@wirestream/testkit';
import { rawSocket, startTestGateway, type TestGateway } from './support/gateway.js';

let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway({}, {}, undefined, (sdl) =>
    sdl.replace('type ListingEvent {', 'scalar Long\n\ntype Extra {\n  needed: String!\n}\n\ntype ListingEvent {\n  extra: Extra\n  seq: Long\n  seqs: [Long!]\n  big_id: ID\n  big_name: String\n  big_float: Float\n  small: Long\n'),
  );
});
afterAll(() => t?.stop());

it('writes every digit of a Long, an ID or a String holding one, and a Float as its nearest double', async () => {
  const frames: string[] = [];
  const raw = rawSocket(t.url);
  raw.ws.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
  await raw.opened;
  raw.ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  raw.ws.send(JSON.stringify({ id: 'a', type: 'subscribe', payload: { query: 'subscription { listingUpdated { listing_id seq seqs big_id big_name big_float small } }' } }));
  // An ID filter compares the digits: the rounded text (…456800) matches nothing.
  raw.ws.send(JSON.stringify({ id: 'id', type: 'subscribe', payload: { query: 'subscription { listingUpdated(where: { big_id: { eq: "1234567890123456789" } }) { listing_id } }' } }));
  raw.ws.send(JSON.stringify({ id: 'rounded', type: 'subscribe', payload: { query: 'subscription { listingUpdated(where: { big_id: { in: ["1234567890123456800"] } }) { listing_id } }' } }));
  await waitFor(() => t.gateway.stats().subscriptions === 3 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });

  const payload =
    '{"event_id":"e-1","event_type":"ListingUpdated","listing_id":"lst-long","occurred_at":"now","note":"1234567890123456789 in a string",' +
    '"seq":9223372036854775807,"seqs":[-9223372036854775808,9007199254740993,1],"big_id":1234567890123456789,"big_name":18446744073709551615,' +
    '"big_float":12345678901234567890,"small":42}';
  await t.publishRaw(encodeEnvelope({ topic: t.topic, partition: 0, offset: '7', key: 'lst-long', ts: Date.now() }, payload), shardOf('lst-long', 16));

  await waitFor(() => frames.some((f) => f.includes('"next"') && f.includes('"id":"a"')) && frames.some((f) => f.includes('"id":"id"')), { message: 'the event' });
  await t.publishListing('lst-after', 'ListingUpdated', '8'); // the unfiltered one gets it: the filtered ones had their chance
  await waitFor(() => frames.filter((f) => f.includes('lst-after')).length === 1, { message: 'the next event' });
  expect(frames.filter((f) => f.includes('"id":"rounded"'))).toEqual([]);
  const next = frames.find((f) => f.includes('"next"') && f.includes('"id":"a"')) as string;
  expect(next).toContain(
    '"listingUpdated":{"listing_id":"lst-long","seq":9223372036854775807,"seqs":[-9223372036854775808,9007199254740993,1],' +
      '"big_id":"1234567890123456789","big_name":"18446744073709551615","big_float":12345678901234567000,"small":42}',
  );
  expect(next).toContain('"position":{"topic"');
  raw.ws.close();
});

it('the same on the execute path: an event the projector declines (a non-null field missing below a nullable one)', async () => {
  const frames: string[] = [];
  const raw = rawSocket(t.url);
  raw.ws.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
  await raw.opened;
  raw.ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  raw.ws.send(JSON.stringify({ id: 'x', type: 'subscribe', payload: { query: 'subscription { listingUpdated { listing_id extra { needed } seq seqs big_id big_name big_float } }' } }));
  await waitFor(() => t.gateway.stats().subscriptions === 1 && t.gateway.stats().confirmedChannels === 16, { message: 'subscribed' });
  const executionsBefore = t.gateway.stats().executions;
  const payload =
    '{"event_id":"e-2","event_type":"ListingUpdated","listing_id":"lst-exec","occurred_at":"now","extra":{},' +
    '"seq":9223372036854775807,"seqs":[-9223372036854775808,1],"big_id":1234567890123456789,"big_name":18446744073709551615,"big_float":12345678901234567890}';
  await t.publishRaw(encodeEnvelope({ topic: t.topic, partition: 0, offset: '9', key: 'lst-exec', ts: Date.now() }, payload), shardOf('lst-exec', 16));
  await waitFor(() => frames.some((f) => f.includes('lst-exec')), { message: 'the event' });
  expect(t.gateway.stats().executions).toBeGreaterThan(executionsBefore);
  const next = frames.find((f) => f.includes('lst-exec')) as string;
  expect(next).toContain(
    '"listingUpdated":{"listing_id":"lst-exec","extra":null,"seq":9223372036854775807,"seqs":[-9223372036854775808,1],' +
      '"big_id":"1234567890123456789","big_name":"18446744073709551615","big_float":12345678901234567000}',
  );
  // Only the missing field's error: none for the digits.
  const errors = (JSON.parse(next) as { payload: { errors?: { path: unknown[] }[] } }).payload.errors ?? [];
  expect(errors.map((e) => e.path)).toEqual([['listingUpdated', 'extra', 'needed']]);
  expect(next).toContain('"position":{"topic"');
  raw.ws.close();
});
