// Runs the whole product locally: Kafka and Redis (when not configured), ingest, gateway and the
// demo producer as child processes; prints where to connect; stops everything on Ctrl-C.
// Logs of each process go to .wirestream/logs/<name>.log.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const logDir = join(root, '.wirestream', 'logs');
mkdirSync(logDir, { recursive: true });
const children = [];
const cleanups = [];
let stopping = false;

function freePort(preferred) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => (preferred ? freePort(0).then(resolve) : resolve(0)));
    server.listen(preferred ?? 0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function start(name, file, env) {
  const log = openSync(join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, [join(root, file)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
  });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`\n${name} exited (${signal ?? code}); see ${join(logDir, `${name}.log`)}`);
      void stop(1);
    }
  });
  children.push({ name, child });
  return child;
}

async function waitHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  for (const { child } of children.reverse()) child.kill('SIGTERM');
  await Promise.all(children.map(({ child }) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : null)));
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch (err) {
      console.error(String(err));
    }
  }
  console.log('stopped everything this command started');
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

let kafkaBrokers = process.env.KAFKA_BROKERS;
if (!kafkaBrokers) {
  const port = await freePort(9092);
  const dataDir = join(root, '.wirestream', `kafka-${port}`);
  console.log(`starting a local Kafka broker on 127.0.0.1:${port} (set KAFKA_BROKERS to use yours)`);
  execFileSync('bash', [join(root, 'infra/kafka/start.sh'), '--port', String(port), '--data-dir', dataDir, '--watch-pid', String(process.pid)], { stdio: 'inherit' });
  cleanups.push(() => execFileSync('bash', [join(root, 'infra/kafka/stop.sh'), '--data-dir', dataDir], { stdio: 'inherit' }));
  kafkaBrokers = `127.0.0.1:${port}`;
}

let redisUrl = process.env.REDIS_URL;
if (!redisUrl) {
  const port = await freePort(6380);
  console.log(`starting a local redis-server on 127.0.0.1:${port} (set REDIS_URL to use yours)`);
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', openSync(join(logDir, 'redis.log'), 'a'), 'inherit'],
  });
  cleanups.push(() => redis.kill('SIGTERM'));
  redisUrl = `redis://127.0.0.1:${port}`;
}

const gatewayPort = process.env.GATEWAY_PORT ? Number(process.env.GATEWAY_PORT) : await freePort(4000);
const ingestHttpPort = process.env.INGEST_HTTP_PORT ? Number(process.env.INGEST_HTTP_PORT) : await freePort(9464);
// Local demo: anonymous access. Production sets GATEWAY_AUTH_MODE=jwt (see infra/k8s).
// The web console is on for the local product (it is off by default in the gateway's own settings).
const consoleOn = (process.env.GATEWAY_CONSOLE ?? 'true') === 'true';
const env = {
  KAFKA_BROKERS: kafkaBrokers,
  REDIS_URL: redisUrl,
  GATEWAY_PORT: String(gatewayPort),
  // Safe by default on a laptop: anonymous access and the console are reachable from this machine only.
  GATEWAY_HOST: process.env.GATEWAY_HOST ?? '127.0.0.1',
  INGEST_HTTP_HOST: process.env.INGEST_HTTP_HOST ?? '127.0.0.1',
  GATEWAY_AUTH_MODE: process.env.GATEWAY_AUTH_MODE ?? 'anonymous',
  GATEWAY_CONSOLE: String(consoleOn),
  INGEST_HTTP_PORT: String(ingestHttpPort),
};
// Every path of ingest in the demo: bid-events in Avro and price-events in Protobuf (their schemas in
// apps/demo/schemas, a schema directory), listing-events in JSON. Not when SCHEMA_PATH names a schema of
// one's own, or DEMO_AVRO=false.
const avroDemo = process.env.SCHEMA_PATH === undefined && (process.env.DEMO_AVRO ?? 'true') === 'true';
if (avroDemo) Object.assign(env, avroDemoSettings(), await startSellers());
start('gateway', 'apps/gateway/dist/main.js', env);
start('ingest', 'apps/ingest/dist/main.js', env);
await waitHttp(`http://127.0.0.1:${gatewayPort}/readyz`, 30_000);
start('demo-producer', 'apps/demo/dist/producer.js', { ...env, DEMO_RATE: process.env.DEMO_RATE ?? '5', ...(avroDemo ? { DEMO_AVRO_SCHEMA_DIR: env.SCHEMA_DIR } : {}) });

const ws = `ws://127.0.0.1:${gatewayPort}/graphql`;
const portNote = process.env.GATEWAY_PORT || gatewayPort === 4000 ? '' : `Port 4000 is taken: the gateway is on ${gatewayPort} (every address here uses it).\n\n`;
const { examples, schemaLabel } = await exampleSubscriptions();
console.log(`
Wirestream is running.
${consoleOn ? `  Console (playground, live view, vital signs): http://127.0.0.1:${gatewayPort}/console/\n` : ''}  WebSocket (graphql-transport-ws): ${ws}
  Gateway health / ready / stats:   http://127.0.0.1:${gatewayPort}/healthz  /readyz  /stats
  Ingest health / ready / metrics:  http://127.0.0.1:${ingestHttpPort}/healthz  /readyz  /metrics
  Kafka: ${kafkaBrokers}    Redis: ${redisUrl}    Logs: ${logDir}
${env.GATEWAY_LOOKUP_SOURCES ? `  Seller subgraph (the @lookup source): ${env.GATEWAY_LOOKUP_SOURCES.slice('sellers='.length)}\n` : ''}
${portNote}Subscriptions from the schema it loaded (${schemaLabel}):
${examples.map((e) => `  ${e}`).join('\n')}

Watch events arrive from another terminal:
  node apps/demo/dist/watch.js --url ${ws}
  node apps/demo/dist/watch.js --url ${ws} '${examples.at(-1) ?? ''}'

Press Ctrl-C to stop everything.
`);

// A one-line pulse so the terminal shows the pipeline moving.
setInterval(async () => {
  try {
    const s = await (await fetch(`http://127.0.0.1:${gatewayPort}/stats`)).json();
    console.log(`[gateway] connections=${s.connections} subscriptions=${s.subscriptions} operations=${s.groups} eventsIn=${s.eventsIn} framesOut=${s.framesOut}`);
  } catch {
    /* gateway restarting or stopped */
  }
}, 10_000).unref();

/**
 * The example schema with bid-events read as Avro and a Protobuf price-events topic (its type as
 * `wirestream-schema from-registry --schema-dir apps/demo/schemas --topic price-events` writes it),
 * written beside the logs, and the schema directory.
 */
function avroDemoSettings() {
  const binding = '@topic(name: "bid-events", key: "listing_id")';
  const sdl = readFileSync(join(root, 'packages/schema/schema/auction.graphql'), 'utf8');
  if (!sdl.includes(`${binding}\n}`)) throw new Error(`the example schema no longer ends its Subscription type with ${binding}: update scripts/run-product.mjs`);
  // After bidPlaced, the last field of the Subscription type: the examples keep the example schema's order.
  const bidAndPrice = `@topic(name: "bid-events", key: "listing_id", format: AVRO)

  "A listing's price after each bid (Protobuf: apps/demo/schemas/price-events-value)."
  priceChanged(listing_id: ID): PriceChanged @topic(name: "price-events", key: "listing_id", format: PROTOBUF)`;
  const priceType = `
"A listing's price after a bid, as the demo producer writes it in Protobuf (the Confluent wire format)."
type PriceChanged {
  listing_id: ID!
  "A Protobuf int64: published as its digits (docs/schema.md)."
  current_price_cents: String!
  currency_code: String!
  leading_bidder_id: String!
  bid_count: Int!
  is_auto_bid: Boolean!
  updated_at: String
}
`;
  // The seller as the seller service knows it, looked up by the event's seller_id (apps/demo/src/sellers-subgraph.ts).
  const sellerInfo = 'type SellerInfo {\n  seller_id: ID!\n';
  if (!sdl.includes(sellerInfo)) throw new Error(`the example schema's SellerInfo no longer starts with seller_id: update scripts/run-product.mjs`);
  const sellerLookup = `${sellerInfo}  "The seller service's profile of this seller (the demo's seller subgraph, through _entities)."
  seller: Seller @lookup(source: "sellers", key: "id: seller_id")
`;
  const sellerType = `
"A seller as the demo's seller subgraph serves it (apps/demo/src/seller-profiles.ts)."
type Seller {
  id: ID!
  display_name: String!
  rating: Float
  is_verified: Boolean!
  listings_sold: Int!
}
`;
  const schemaPath = join(root, '.wirestream', 'auction-avro.graphql');
  writeFileSync(schemaPath, sdl.replace(binding, bidAndPrice).replace(sellerInfo, sellerLookup) + priceType + sellerType);
  return { SCHEMA_PATH: schemaPath, SCHEMA_DIR: join(root, 'apps/demo/schemas') };
}

/** The demo's seller subgraph, the source of the demo schema's `@lookup` field; the gateway's setting naming it. */
async function startSellers() {
  const port = await freePort(4001);
  start('sellers', 'apps/demo/dist/sellers.js', { SELLERS_PORT: String(port), SELLERS_HOST: '127.0.0.1' });
  await waitHttp(`http://127.0.0.1:${port}/healthz`, 15_000);
  return { GATEWAY_LOOKUP_SOURCES: `sellers=http://127.0.0.1:${port}/graphql` };
}

/**
 * One subscription per field of the schema the apps loaded (SCHEMA_PATH, or the example), selecting
 * its payload's scalar fields, plus one filtered by the routing key: what to paste into a client.
 */
async function exampleSubscriptions() {
  const { auctionSchemaPath, loadWirestreamSchema } = await import(join(root, 'packages/schema/dist/index.js'));
  // graphql-js types without importing it here: unwrap lists and non-nulls; object types have fields.
  const named = (type) => (type.ofType ? named(type.ofType) : type);
  const hasFields = (type) => typeof type.getFields === 'function';
  // Yours (SCHEMA_PATH, passed through to the apps) before the demo's: `env` holds only what this script sets.
  const path = process.env.SCHEMA_PATH ?? env.SCHEMA_PATH ?? auctionSchemaPath;
  const wirestream = loadWirestreamSchema(path);
  const subscription = wirestream.schema.getSubscriptionType();
  const examples = [];
  let filtered;
  for (const route of wirestream.routes.values()) {
    const type = named(subscription.getFields()[route.fieldName].type);
    if (!hasFields(type)) continue;
    const leaves = Object.values(type.getFields()).filter((f) => !hasFields(named(f.type))).map((f) => f.name).slice(0, 6);
    examples.push(`subscription { ${route.fieldName} { ${leaves.join(' ')} } }`);
    if (!filtered && route.keyField && route.filterArgs.includes(route.keyField)) {
      filtered = `subscription { ${route.fieldName}(${route.keyField}: "…") { ${leaves.join(' ')} } }`;
    }
  }
  if (filtered) examples.push(filtered);
  if (wirestream.lookups.some((l) => l.typeName === 'SellerInfo' && l.fieldName === 'seller')) {
    examples.push('subscription { listingUpdated { listing_id listing { title seller_info { seller_id seller { display_name rating } } } } }');
  }
  const formats = [...new Set([...wirestream.routes.values()].map((r) => `${r.topic}: ${r.format}`))].join(', ');
  return { examples, schemaLabel: `${process.env.SCHEMA_PATH ? path : avroDemo ? 'the example auction schema, bid-events in Avro, price-events in Protobuf' : 'the example auction schema'}; ${formats}` };
}
