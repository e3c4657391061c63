// The back-fill after a broker reconnect reads history, not the inbound queue, so the queue's bound of
// renders in flight (GATEWAY_MAX_RENDERS_IN_FLIGHT) must hold there too: at the bound it waits for a
// render to settle. On the real in-process bus with history, a resolver that takes a few ms per event.
import { GraphQLObjectType } from 'graphql';
import { expect, it } from 'vitest';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { channelName, encodeEnvelope, shardOf } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { waitFor } from '@wirestream/testkit';
import { createHub, createMemoryBus, createOperationCompiler, type ConnectionWriter } from '../src/index.js';

const TOPIC = 'listing-events';
const MAX_IN_FLIGHT = 4;
const EVENTS = 300;

interface Conn {
  readonly labels: string[];
}

const writer: ConnectionWriter<Conn> = {
  send: () => undefined,
  sendFrames(c, head, payloads) {
    for (const p of payloads) c.labels.push((JSON.parse(head + p + '}') as { payload: { data: { listingUpdated: { event_type: string } } } }).payload.data.listingUpdated.event_type);
  },
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

it('waits at GATEWAY_MAX_RENDERS_IN_FLIGHT while back-filling, and delivers everything in order', async () => {
  const schema = loadWirestreamSchema(auctionSchemaPath);
  let resolving = 0;
  let peakResolving = 0;
  const type = schema.schema.getType('ListingEvent');
  const field = type instanceof GraphQLObjectType ? type.getFields()['event_type'] : undefined;
  if (!field) throw new Error('ListingEvent.event_type missing from the schema');
  field.resolve = async (source: { event_type: string }) => {
    resolving++;
    peakResolving = Math.max(peakResolving, resolving);
    await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 3));
    resolving--;
    return source.event_type;
  };
  const compiled = createOperationCompiler(schema).compile({ query: 'subscription { listingUpdated { listing_id event_type } }' });
  if (!compiled.ok || compiled.operation.kind !== 'subscription') throw new Error('does not compile');
  expect(compiled.operation.projector).toBeUndefined(); // executed: the resolver is async

  const bus = createMemoryBus();
  const hub = createHub<Conn>({ schema, broker: bus.broker, history: bus.history, logger: createLogger({ name: 'backfill-bound', destination: createMemorySink() }), writer, maxRendersInFlight: MAX_IN_FLIGHT });
  const conn: Conn = { labels: [] };
  hub.subscribe(conn, '1', compiled.operation);
  await waitFor(() => hub.stats().confirmedChannels === 16, { message: 'subscribed' });

  bus.disconnect();
  // History only while the broker is away: the back-fill brings them, all at once from its reads.
  const expected: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const key = `lst-${i % 7}`;
    const text = encodeEnvelope({ topic: TOPIC, partition: 0, offset: String(i), key, ts: Date.now() }, JSON.stringify({ listing_id: key, event_type: `e${i}` }));
    bus.publish(channelName('ws', TOPIC, shardOf(key, 16)), text, { topic: TOPIC, partition: 0, offset: String(i) });
    expected.push(`e${i}`);
  }
  bus.reconnect();
  await waitFor(() => conn.labels.length === EVENTS, { timeoutMs: 20_000, message: 'every event back-filled' });
  expect(conn.labels).toEqual(expected);
  expect(hub.stats().backfilled).toBe(EVENTS);
  // One message's fan-out is never cut (one group here): the bound may be passed by one.
  expect(hub.stats().peakRendersInFlight).toBeLessThanOrEqual(MAX_IN_FLIGHT + 1);
  expect(peakResolving).toBeLessThanOrEqual(MAX_IN_FLIGHT + 1);
});

