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
 * Env and HTTP endpoints: as the baselines.
 */
import uWS from 'uWebSockets.js';
import { Redis } from 'ioredis';
import { topicChannels, loadWirestreamSchema } from '@wirestream/schema';
import { memoryReport, readServerConfig } from './common.js';

const config = readServerConfig();
const corkBatch = process.env['BARE_CORK_BATCH'] === 'true';

interface SocketData {
  /** `{"id":"<id>","type":"next","payload":` for its one subscription, or undefined. */
  head: string | undefined;
}

const subscribed = new Set<uWS.WebSocket<SocketData>>();
const app = uWS.App();
app.ws<SocketData>('/graphql', {
  maxBackpressure: 1_048_576, // same bound as our gateway
  closeOnBackpressureLimit: 1,
  idleTimeout: 60,
  upgrade(res, req, context) {
    res.upgrade<SocketData>(
      { head: undefined },
      req.getHeader('sec-websocket-key'),
      'graphql-transport-ws',
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  message(ws, message) {
    const text = Buffer.from(message).toString('utf8');
    const parsed = JSON.parse(text) as { type?: string; id?: string };
    if (parsed.type === 'connection_init') ws.send('{"type":"connection_ack"}');
    else if (parsed.type === 'subscribe' && parsed.id !== undefined) {
      ws.getUserData().head = `{"id":${JSON.stringify(parsed.id)},"type":"next","payload":`;
      subscribed.add(ws);
    } else if (parsed.type === 'complete') subscribed.delete(ws);
    else if (parsed.type === 'ping') ws.send('{"type":"pong"}');
  },
  close(ws) {
    subscribed.delete(ws);
  },
});

const redis = new Redis(config.redisUrl);
const ws = loadWirestreamSchema(config.schemaPath);
const route = ws.routes.get('listingUpdated');
if (!route) throw new Error('schema has no listingUpdated route');
void redis.subscribe(...topicChannels(config.channelPrefix, route.topic, route.shards));
redis.on('message', (_channel: string, text: string) => {
  // The envelope ends with `"payload":<json>}`: reuse the payload text as is.
  const at = text.indexOf(',"payload":');
  const meta = JSON.parse(`${text.slice(0, at)}}`) as { topic: string; partition: number; offset: string };
  const body =
    `{"data":{"listingUpdated":${text.slice(at + 11, -1)}},"extensions":{"position":` +
    `{"topic":${JSON.stringify(meta.topic)},"partition":${meta.partition},"offset":"${meta.offset}"}}}}`;
  if (!corkBatch) {
    for (const socket of subscribed) socket.send(socket.getUserData().head + body, false);
    return;
  }
  batch.push(body);
  if (batch.length === 1) setImmediate(flush);
});

let batch: string[] = [];
function flush(): void {
  const bodies = batch;
  batch = [];
  for (const socket of subscribed) {
    const head = socket.getUserData().head;
    socket.cork(() => {
      for (const body of bodies) socket.send(head + body, false);
    });
  }
}

const respond = (res: uWS.HttpResponse, status: string, type: string, body: string): void => {
  res.cork(() => res.writeStatus(status).writeHeader('content-type', type).writeHeader('cache-control', 'no-store').end(body));
};
app.get('/healthz', (res) => respond(res, '200 OK', 'text/plain', 'ok'));
app.get('/stats', (res) => respond(res, '200 OK', 'application/json', JSON.stringify({ subscriptions: subscribed.size })));
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
