// The hub's choice of path per channel (decision 0043): while no group on a channel reads payloads as
// objects, events are scanned and rendered from their text by the WebAssembly projector; a group with a
// `where` (or without a byte plan) switches its channel to decodeEnvelope until it leaves. Either way
// every subscriber gets the same bytes.
import { describe, expect, it } from 'vitest';
import { createWirestreamSchema } from '@wirestream/schema';
import { channelName, encodeEnvelope, shardOf } from '@wirestream/wire';
import { createLogger, createMemorySink } from '@wirestream/telemetry';
import { waitFor } from '@wirestream/testkit';
import { createHub, createMemoryBus, createOperationCompiler, type CompiledSubscription, type ConnectionWriter } from '../src/index.js';

const ws = createWirestreamSchema(`
enum Kind { A B }
type Subscription { ev(id: ID): Ev @topic(name: "evs", key: "id", shards: 1) }
type Ev { id: ID, n: Int, kind: Kind }
`);
const compiler = createOperationCompiler(ws);

function compile(query: string, variables: Record<string, unknown> = {}): CompiledSubscription {
  const result = compiler.compile({ query, variables });
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`does not compile: ${JSON.stringify(result)}`);
  return result.operation;
}

interface Conn {
  readonly payloads: string[];
}

const writer: ConnectionWriter<Conn> = {
  send: () => undefined,
  sendFrames(c, _head, payloads) {
    c.payloads.push(...payloads);
  },
  close: () => undefined,
  hasRoom: () => true,
  replayChunkBytes: 65_536,
};

describe('the byte path, channel by channel (decision 0043)', () => {
  it('renders from the text while no group reads payloads as objects, and from the object while one does', async () => {
    const bus = createMemoryBus();
    const hub = createHub<Conn>({ schema: ws, broker: bus.broker, history: undefined, logger: createLogger({ name: 'byte-path', destination: createMemorySink() }), writer });
    const channel = channelName('ws', 'evs', shardOf('1', 1));
    let offset = 0;
    const publish = async (payload: Record<string, unknown>, receivers: readonly Conn[]): Promise<void> => {
      const before = receivers.map((c) => c.payloads.length);
      bus.publish(channel, encodeEnvelope({ topic: 'evs', partition: 0, offset: String(offset++), key: '1', ts: 1 }, JSON.stringify(payload)), undefined, { partition: 0, offset: String(offset - 1), on: 'id', key: '1' });
      await waitFor(() => receivers.every((c, i) => c.payloads.length > (before[i] as number)) && hub.stats().inbound.messages === 0, { timeoutMs: 2_000, intervalMs: 1 });
    };
    const keyed: Conn = { payloads: [] };
    const filtered: Conn = { payloads: [] };
    const enums: Conn = { payloads: [] };
    hub.subscribe(keyed, 'k', compile('subscription { ev(id: "1") { id n } }'));
    await waitFor(() => hub.stats().confirmedChannels === hub.stats().channels, { timeoutMs: 2_000, intervalMs: 1 });

    await publish({ id: '1', n: 1 }, [keyed]);
    expect(hub.stats().byteRenders).toBe(1);

    const where = hub.subscribe(filtered, 'w', compile('subscription($w: EvWhere) { ev(where: $w) { id n } }', { w: { n: { eq: 2 } } }));
    await publish({ id: '1', n: 2 }, [keyed, filtered]);
    expect(hub.stats().byteRenders).toBe(1); // a `where` reads the payload: the channel's events are parsed
    hub.unsubscribe(where);

    const kind = hub.subscribe(enums, 'e', compile('subscription { ev(id: "1") { kind } }'));
    await publish({ id: '1', n: 3, kind: 'B' }, [keyed, enums]);
    expect(hub.stats().byteRenders).toBe(1); // an enum has no byte plan: parsed too
    hub.unsubscribe(kind);

    await publish({ id: '1', n: 4 }, [keyed]);
    expect(hub.stats().byteRenders).toBe(2); // the channel is back on the byte path
    expect(hub.stats().executions).toBe(6);

    const data = (payload: string): unknown => (JSON.parse(payload) as { data: unknown }).data;
    expect(keyed.payloads.map(data)).toEqual([1, 2, 3, 4].map((n) => ({ ev: { id: '1', n } })));
    expect(filtered.payloads.map(data)).toEqual([{ ev: { id: '1', n: 2 } }]);
    expect(enums.payloads.map(data)).toEqual([{ ev: { kind: 'B' } }]);
  });
});
