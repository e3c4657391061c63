/**
 * Reference point, not a product: bare uWebSockets.js with no GraphQL at all. It acks
 * `connection_init`, remembers each `subscribe`, and per Redis message writes one prebuilt `next`
 * frame (the whole event, as the full selection would) to every subscriber. What it reaches is
 * the ceiling of this machine with this load client: the best any gateway could do, and proof of
 * how much the client can take. Filters are ignored: run it with an unfiltered mix.
 *
 * BARE_CORK_BATCH=true: frames of all events that arrived in one event-loop turn are written per
 * socket inside one `cork()` (one write syscall for several frames) instead of one send per event
 * per socket: what batching across events would buy a gateway under bursts.
 *
 * BARE_PROJECT=true (issue 18, the "bare server" cost per extra projection): subscribers are
 * grouped by their operation (query + variables + operationName); each Redis message is parsed
 * once (JSON.parse), then per distinct operation its selected fields are picked from the payload
 * (selection.ts: fields and aliases, what a bare server hand-rolls) and `JSON.stringify`d with
 * `extensions.position` once, and sent to that operation's subscribers. `/stats` counts those
 * renders as `executions`, like our gateway.
 *
 * BARE_UNICAST=true (the unicast scenario's floor): subscribers are grouped by the listing key their
 * document pins (`listingUpdated(listing_id: "lst-…")`); each Redis message in ingest's batch form
 * is split into its envelopes (`parseEnvelopeBatchPart`, which also gives each envelope's routing
 * key), and an envelope whose key has a subscriber is sent to it as the whole event: no parse of the
 * payload, no filter, no projection. The least a unicast server does per delivery: read the
 * message, find the socket, write one frame.
 *
 * Env and HTTP endpoints: as the baselines.
 */
import uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { loadWirestreamSchema } from '@wirestream/schema';
import { isEnvelopeBatchPart, parseEnvelopeBatchPart, topicChannels } from '@wirestream/wire';
import { memoryReport, readServerConfig } from './common.js';
import { compileSelection } from './selection.js';

const config = readServerConfig();
const corkBatch = process.env['BARE_CORK_BATCH'] === 'true';
const project = process.env['BARE_PROJECT'] === 'true';
const unicast = process.env['BARE_UNICAST'] === 'true';
const FIELD = 'listingUpdated';

/** The envelope as the ingest writes it (the fields a `next` needs). */
interface Envelope {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly payload: unknown;
}

/** One Redis message: its text, and the envelope parsed at most once however many operations read it. */
interface Arrival {
  readonly text: string;
  readonly envelope: Envelope;
}

function arrival(text: string): Arrival {
  let parsed: Envelope | undefined;
  return {
    text,
    get envelope(): Envelope {
      return (parsed ??= JSON.parse(text) as Envelope);
    },
  };
}

/** The subscribers of one operation (all of them when not projecting) and how it renders an event. */
interface Group {
  readonly key: string;
  readonly sockets: Set<uWS.WebSocket<SocketData>>;
  /** The `next` payload of one event for this operation, and the `}` that closes the message after it. */
  readonly render: (event: Arrival) => string;
}

interface SocketData {
  /** `{"id":"<id>","type":"next","payload":` for its one subscription, or undefined. */
  head: string | undefined;
  group: Group | undefined;
}

const PAYLOAD_FIELD = ',"payload":';

/** The envelope's payload text: an envelope ends with `"payload":<json>}`. */
function payloadTextOf(envelope: string, at = envelope.indexOf(PAYLOAD_FIELD)): string {
  return envelope.slice(at + PAYLOAD_FIELD.length, -1);
}

/** The whole event, as the full selection would: the envelope's payload text reused as is (and the message's closing `}`). */
function wholeEvent({ text }: Arrival): string {
  const at = text.indexOf(PAYLOAD_FIELD);
  const meta = JSON.parse(`${text.slice(0, at)}}`) as { topic: string; partition: number; offset: string };
  return (
    `{"data":{"listingUpdated":${payloadTextOf(text, at)}},"extensions":{"position":` +
    `{"topic":${JSON.stringify(meta.topic)},"partition":${meta.partition},"offset":"${meta.offset}"}}}}`
  );
}

interface SubscribeRequest {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

/** Projecting: one render per operation and event, its selected fields of the parsed payload. */
function projectingRender(request: SubscribeRequest): Group['render'] {
  if (typeof request.query !== 'string') throw new Error('subscribe without a query');
  const op = compileSelection(request.query, typeof request.operationName === 'string' ? request.operationName : undefined);
  if (op.rootField !== FIELD) throw new Error(`the bare projector serves ${FIELD} only, not ${op.rootField}`);
  return ({ envelope: e }) => {
    executions++;
    // The `}` closes the `next` message around the payload, as in wholeEvent.
    return `${JSON.stringify({ data: { [op.responseKey]: op.pick(e.payload) }, extensions: { position: { topic: e.topic, partition: e.partition, offset: e.offset } } })}}`;
  };
}

const groups = new Map<string, Group>();
let executions = 0;

/** The listing a unicast document pins (`listing_id: "lst-…"` written in it, or `$id`'s value). */
function pinnedListing(request: SubscribeRequest): string {
  const written = typeof request.query === 'string' ? /listing_id:\s*"([^"]*)"/.exec(request.query)?.[1] : undefined;
  const variable = (request.variables as { id?: unknown } | undefined)?.id;
  const key = written ?? (typeof variable === 'string' ? variable : undefined);
  if (key === undefined) throw new Error('the bare unicast server serves listingUpdated(listing_id: …) only');
  return key;
}

function join(request: SubscribeRequest): Group {
  const key = unicast ? pinnedListing(request) : project ? JSON.stringify([request.query, request.variables ?? null, request.operationName ?? null]) : '';
  let group = groups.get(key);
  if (!group) {
    const render = project
      ? projectingRender(request)
      : (event: Arrival): string => {
          executions++;
          return wholeEvent(event);
        };
    group = { key, sockets: new Set(), render };
    groups.set(key, group);
  }
  return group;
}

function leave(socket: uWS.WebSocket<SocketData>): void {
  const data = socket.getUserData();
  const group = data.group;
  if (!group) return;
  data.group = undefined;
  group.sockets.delete(socket);
  if (group.sockets.size === 0) groups.delete(group.key);
}

const app = uWS.App();
app.ws<SocketData>('/graphql', {
  maxBackpressure: 1_048_576, // same bound as our gateway
  closeOnBackpressureLimit: true,
  idleTimeout: 60,
  upgrade(res, req, context) {
    res.upgrade<SocketData>(
      { head: undefined, group: undefined },
      req.getHeader('sec-websocket-key'),
      'graphql-transport-ws',
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  message(ws, message) {
    const text = Buffer.from(message).toString('utf8');
    const parsed = JSON.parse(text) as { type?: string; id?: string; payload?: SubscribeRequest };
    if (parsed.type === 'connection_init') ws.send('{"type":"connection_ack"}');
    else if (parsed.type === 'subscribe' && parsed.id !== undefined) {
      const id = JSON.stringify(parsed.id);
      let group: Group;
      try {
        group = join(parsed.payload ?? {});
      } catch (err) {
        ws.send(`{"id":${id},"type":"error","payload":[{"message":${JSON.stringify((err as Error).message)}}]}`);
        return;
      }
      leave(ws);
      const data = ws.getUserData();
      data.head = `{"id":${id},"type":"next","payload":`;
      data.group = group;
      group.sockets.add(ws);
    } else if (parsed.type === 'complete') leave(ws);
    else if (parsed.type === 'ping') ws.send('{"type":"pong"}');
  },
  close(ws) {
    leave(ws);
  },
});

const redis = new Redis(config.redisUrl);
const ws = loadWirestreamSchema(config.schemaPath);
const route = ws.routes.get(FIELD);
if (!route) throw new Error(`schema has no ${FIELD} route`);
const topicJson = JSON.stringify(route.topic);
void redis.subscribe(...topicChannels(config.channelPrefix, route.topic, route.shards));
redis.on('message', (_channel: string, text: string) => {
  if (unicast) {
    sendToKeys(text);
    return;
  }
  const event = arrival(text);
  if (!corkBatch) {
    for (const group of groups.values()) {
      const body = group.render(event);
      for (const socket of group.sockets) socket.send(socket.getUserData().head + body, false);
    }
    return;
  }
  batch.push(event);
  if (batch.length === 1) setImmediate(flush);
});

/** Unicast: each envelope of a batch part to the sockets of its routing key, as the whole event; a single envelope by its parsed key. */
function sendToKeys(text: string): void {
  if (!isEnvelopeBatchPart(text)) {
    const e = JSON.parse(text) as Envelope & { payload: { listing_id?: unknown } };
    const group = typeof e.payload.listing_id === 'string' ? groups.get(e.payload.listing_id) : undefined;
    if (group !== undefined) sendWhole(group, payloadTextOf(text), e.partition, e.offset);
    return;
  }
  const part = parseEnvelopeBatchPart(text);
  const keys = part.routingKeys;
  if (keys === undefined) throw new Error('the bare unicast server needs batch parts with routing keys (ingest after decision 0039)');
  for (let i = 0; i < keys.length; i++) {
    const group = groups.get(keys[i] ?? '');
    if (group === undefined) continue;
    const envelope = part.envelopes[i] as string;
    sendWhole(group, payloadTextOf(envelope), part.partition, part.offsets[i] as string);
  }
}

function sendWhole(group: Group, payload: string, partition: number, offset: string): void {
  executions++;
  const body = `{"data":{"listingUpdated":${payload}},"extensions":{"position":{"topic":${topicJson},"partition":${partition},"offset":"${offset}"}}}}`;
  for (const socket of group.sockets) socket.send(socket.getUserData().head + body, false);
}

let batch: Arrival[] = [];
function flush(): void {
  const events = batch;
  batch = [];
  for (const group of groups.values()) {
    const bodies = events.map(group.render);
    for (const socket of group.sockets) {
      const head = socket.getUserData().head;
      socket.cork(() => {
        for (const body of bodies) socket.send(head + body, false);
      });
    }
  }
}

const subscriptions = (): number => {
  let n = 0;
  for (const group of groups.values()) n += group.sockets.size;
  return n;
};
const respond = (res: uWS.HttpResponse, status: string, type: string, body: string): void => {
  res.cork(() => res.writeStatus(status).writeHeader('content-type', type).writeHeader('cache-control', 'no-store').end(body));
};
app.get('/healthz', (res) => respond(res, '200 OK', 'text/plain', 'ok'));
app.get('/stats', (res) => respond(res, '200 OK', 'application/json', JSON.stringify({ subscriptions: subscriptions(), operations: groups.size, executions })));
app.get('/debug/memory', (res, req) => respond(res, '200 OK', 'application/json', memoryReport(req.getQuery('gc') === '1')));
app.any('/*', (res) => respond(res, '404 Not Found', 'text/plain', 'not found'));
app.listen(config.host, config.port, (socket) => {
  if (!socket) {
    process.stderr.write(`bare uWS could not listen on ${config.host}:${config.port}\n`);
    process.exit(1);
  }
  process.stdout.write(`bare uWS listening on ${config.host}:${config.port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
