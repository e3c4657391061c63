#!/usr/bin/env node
// Entry point: read config, build real clients, wire, listen, drain on SIGTERM. Logic lives in gateway.ts.
// First import: refuses to start (exit 78, one line) unless uWebSockets.js is the native addon (decision 0034).
import './transport/native-uws.js';
import { buildOrExit, EXIT_CONFIG, loadConfigOrExit } from '@wirestream/config';
import { redisSecurity } from '@wirestream/connect';
import { checkSdlAtStart, createSchemaSource } from '@wirestream/registry';
import { auctionSchemaPath, loadWirestreamSchema, SchemaError, type WirestreamSchema } from '@wirestream/schema';
import { createLogger, createMetricsRegistry, startTracing, toError } from '@wirestream/telemetry';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import type { EntityLoader, RequestHeaders } from '@wirestream/lookups';
import type { PreparedPlugin } from '@wirestream/plugin';
import { createAuthenticator, type AuthenticatorOptions } from './auth/authenticator.js';
import { loadGatewayPlugin } from './plugin-loader.js';
import { connectRedis } from './broker/redis-connect.js';
import { createRedisTicketStore } from './broker/redis-tickets.js';
import { newTicket, TICKET_PATTERN } from './transport/sse-tickets.js';
import { gatewayConfigSpec } from './config.js';
import { filterRuleProblems, parseFilterRules } from './core/operations/where-bound.js';
import { createGatewayMetrics } from './core/metrics.js';
import { createGateway } from './gateway.js';
import { loadConsoleSite, type ConsoleSite } from './transport/console.js';

const config = loadConfigOrExit(gatewayConfigSpec, process.env, { file: process.env['WIRESTREAM_CONFIG_FILE'] });
const logger = createLogger({ name: 'gateway', level: config.logLevel });
// Before the heap holds anything of ours: V8 reads the factor at each major GC (decision 0044).
if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
// The hub's spans open and close within one synchronous slice: no async hooks needed (tracing.ts).
const tracing = await startTracing(config, { defaultServiceName: 'wirestream-gateway', contextManager: 'synchronous' });
if (tracing !== undefined) logger.info(tracing.summary, 'tracing: exporting spans over OTLP/HTTP');

/** Auth options from config; createAuthenticator rejects contradictions (e.g. jwt without a key). */
function authOptions(): AuthenticatorOptions {
  if (config.authMode === 'anonymous') return { mode: 'anonymous' };
  const optional = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : ({ [key]: value } as Record<K, V>));
  return {
    mode: 'jwt',
    ...optional('hs256Secret', config.jwtHs256Secret),
    ...optional('publicKeysPem', config.jwtPublicKeysFile === undefined ? undefined : readFileSync(config.jwtPublicKeysFile, 'utf8')),
    ...optional('jwksFile', config.jwtJwksFile),
    ...optional('jwksUrl', config.jwtJwksUrl),
    ...optional('audience', config.jwtAudience),
    ...optional('issuer', config.jwtIssuer),
    allowAnonymous: config.jwtAllowAnonymous,
    ...optional('anonymousScopes', config.jwtAnonymousScopes),
    scopesClaim: config.jwtScopesClaim,
    clockToleranceSec: config.jwtClockToleranceSec,
    maxTokenBytes: config.jwtMaxTokenBytes,
    ...optional('tenantClaim', config.jwtTenantClaim),
    ...optional('tenantArgs', config.jwtTenantArgs),
    ...optional('filterRules', config.jwtFilterRules),
  };
}
// The plugin is imported and checked before anything connects: a bad one stops the start.
let plugin: PreparedPlugin | undefined;
if (config.plugin !== undefined) {
  try {
    plugin = await loadGatewayPlugin(config.plugin);
  } catch (err) {
    process.stderr.write(`invalid plugin: ${toError(err).message}\n`);
    process.exit(EXIT_CONFIG);
  }
}
// Look-up headers are parsed before the authenticator: the claims they read are kept per connection.
let lookupHeaders: Map<string, RequestHeaders> | undefined;
if (config.lookupHeaders !== undefined) {
  try {
    const { parseLookupHeaders } = await import('./lookups/lookup-settings.js');
    lookupHeaders = parseLookupHeaders(config.lookupHeaders);
  } catch (err) {
    process.stderr.write(`invalid look-up settings: ${toError(err).message}\n`);
    process.exit(EXIT_CONFIG);
  }
}
let authenticator;
try {
  // A plugin's onSubscribe is given the token's claims: only then are they kept per connection.
  const options = authOptions();
  // The claims look-up headers read are kept too, and are part of the operation's dedup key.
  const keyClaims = lookupHeaders === undefined ? [] : [...new Set([...lookupHeaders.values()].flatMap((h) => h.claims))];
  if (keyClaims.length > 0 && options.mode !== 'jwt') throw new Error(`GATEWAY_LOOKUP_HEADERS reads the claims ${keyClaims.join(', ')}, but GATEWAY_AUTH_MODE=anonymous has no tokens: use jwt or drop {claims.…}`);
  authenticator = createAuthenticator(options.mode === 'jwt' ? { ...options, keepClaims: plugin?.onSubscribe !== undefined, keyClaims } : options);
} catch (err) {
  process.stderr.write(`invalid authentication settings: ${toError(err).message}\n`);
  process.exit(EXIT_CONFIG);
}
// The console's files are read once, here; a console that was asked for but cannot load stops the start.
let consoleSite: ConsoleSite | undefined;
if (config.console) {
  const dir = config.consoleDir ?? fileURLToPath(new URL('../../console/dist', import.meta.url));
  try {
    consoleSite = loadConsoleSite(dir);
  } catch (err) {
    process.stderr.write(`GATEWAY_CONSOLE=true but ${toError(err).message}\n`);
    process.exit(EXIT_CONFIG);
  }
  logger.info({ dir, files: consoleSite.files.size, bytes: consoleSite.bytes }, 'console enabled at /console/');
}
// A schema that cannot be read or served is configuration: every problem in one block on stderr, exit 78.
let schema: WirestreamSchema;
try {
  schema = loadWirestreamSchema(config.schemaPath ?? auctionSchemaPath, { setting: gatewayConfigSpec.schemaPath.name });
} catch (err) {
  if (!(err instanceof SchemaError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(EXIT_CONFIG);
}
// Filter rules were parsed with the authenticator; each must name a path some subscription field can filter on.
const filterRules = config.authMode === 'jwt' ? parseFilterRules(config.jwtFilterRules ?? []) : [];
const ruleProblems = filterRuleProblems(schema, filterRules);
if (ruleProblems.length > 0) {
  process.stderr.write(`${ruleProblems.join('\n')}\n`);
  process.exit(EXIT_CONFIG);
}
if (schema.added.length > 0) logger.info({ added: schema.added }, 'schema: added what the SDL does not declare (docs/schema.md)');
// The same check as ingest's (decisions 0019, 0035): every field the SDL selects on a wire-format topic accepts its
// subject's values, every registered version of it, or exit 78. Optional here: without SCHEMA_REGISTRY_URL / SCHEMA_DIR it is skipped with a warning (ingest's is not).
const schemaSource = await buildOrExit(() => createSchemaSource(config));
const schemaCheckErrors = await checkSdlAtStart(schema, schemaSource?.subjects, { keyStyle: config.keyStyle, log: logger });
if (schemaCheckErrors.length > 0) {
  process.stderr.write(`${schemaCheckErrors.join('\n')}\n`);
  process.exit(EXIT_CONFIG);
}
const registry = createMetricsRegistry({ service: 'gateway' });
const series = config.metricsEnabled ? createGatewayMetrics(registry) : undefined;
// One batched, cached loader per look-up source the schema's @lookup fields name.
let lookups: Map<string, EntityLoader> | undefined;
if (schema.lookups.length > 0) {
  try {
    const byName = (entries: readonly string[] | undefined) => new Map((entries ?? []).map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)] as const));
    // Imported only for a schema with look-ups (DataLoader, lru-cache: decision 0031).
    const { createLookupLoaders } = await import('./lookups/lookup-loaders.js');
    const { createLookupMetrics } = await import('./lookups/lookup-metrics.js');
    const { readLookupTls } = await import('./lookups/lookup-settings.js');
    const { createLookupTracers } = await import('./lookups/lookup-tracing.js');
    const tls = readLookupTls({ caFiles: config.lookupTlsCaFiles, certFiles: config.lookupTlsCertFiles, keyFiles: config.lookupTlsKeyFiles, servernames: config.lookupTlsServernames });
    lookups = createLookupLoaders(schema, {
      sources: byName(config.lookupSources),
      httpSources: byName(config.lookupHttpSources),
      timeoutMs: config.lookupTimeoutMs,
      cacheTtlMs: config.lookupCacheTtlMs,
      cacheMaxEntries: config.lookupCacheMaxEntries,
      maxBatchSize: config.lookupMaxBatchSize,
      maxConcurrentRequests: config.lookupMaxConcurrentRequests,
      ...(lookupHeaders === undefined ? {} : { headers: lookupHeaders }),
      ...(tls.size === 0 ? {} : { tls }),
    }, { observers: config.metricsEnabled ? createLookupMetrics(registry) : undefined, tracers: tracing === undefined ? undefined : createLookupTracers(tracing.tracer) });
  } catch (err) {
    process.stderr.write(`invalid look-up settings: ${toError(err).message}\n`);
    process.exit(EXIT_CONFIG);
  }
}
const { summary: redisSummary, ...redisSecurityOptions } = await buildOrExit(() => redisSecurity(config, config.redisUrl));
logger.info({ mode: config.redisMode, security: redisSummary }, 'connecting to Redis');
const redis = connectRedis({
  security: redisSecurityOptions,
  mode: config.redisMode,
  url: config.redisUrl,
  channelPrefix: config.channelPrefix,
  historyPrefix: config.historyPrefix,
  historyEnabled: config.historyEnabled,
  partitionsPollMs: config.redisPartitionsPollMs,
  logger,
  ...(series ? { onReconnecting: () => series.redisReconnects.inc() } : {}),
});
// SSE tickets in Redis, so any gateway of the fleet redeems one another issued (behind a load balancer).
const tickets = redis.commands
  ? createRedisTicketStore(redis.commands, { prefix: config.historyPrefix, ttlSeconds: config.sseTicketTtlSeconds, newTicket, pattern: TICKET_PATTERN })
  : undefined;
if (config.sseEnabled && tickets === undefined) logger.warn('SSE tickets are kept in this gateway only (GATEWAY_HISTORY=false leaves no Redis command connection): redeem them at the gateway that issued them');
const gateway = createGateway(
  {
    schema,
    broker: redis.broker,
    ...(tickets ? { tickets } : {}),
    ...(redis.history ? { history: redis.history } : {}),
    ...(redis.snapshots ? { snapshots: redis.snapshots } : {}),
    logger,
    authenticator,
    ...(series ? { metrics: { registry, series } } : {}),
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
    ...(plugin === undefined ? {} : { plugin }),
    ...(lookups === undefined ? {} : { lookups }),
  },
  {
    path: config.path,
    channelPrefix: config.channelPrefix,
    maxPayloadBytes: config.maxPayloadBytes,
    sliceMs: config.sliceMs,
    flushDelayMs: config.flushDelayMs,
    maxInboundBytes: config.maxInboundBytes,
    maxRendersInFlight: config.maxRendersInFlight,
    maxBackpressureBytes: config.maxBackpressureBytes,
    socketBufferBytes: config.socketBufferBytes,
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    sseEnabled: config.sseEnabled,
    sseHeartbeatMs: config.sseHeartbeatMs,
    sseTicketTtlSeconds: config.sseTicketTtlSeconds,
    compression: config.compression,
    deltaEnabled: config.deltaEnabled,
    connectionInitWaitTimeoutMs: config.connectionInitWaitTimeoutMs,
    maxSubscriptionsPerConnection: config.maxSubscriptionsPerConnection,
    maxSubscriptionIdLength: config.maxSubscriptionIdLength,
    legacyProtocol: config.legacyProtocol,
    legacyKeepAliveMs: config.legacyKeepAliveMs,
    debugEndpoints: config.debugEndpoints,
    ...(consoleSite ? { console: consoleSite } : {}),
    allowedOrigins: config.allowedOrigins,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    trustedProxyHops: config.trustedProxyHops,
    subscribeRatePerSecond: config.subscribeRatePerSecond,
    subscribeBurst: config.subscribeBurst,
    maxQueryLength: config.maxQueryLength,
    maxTokens: config.maxTokens,
    snapshotMaxKeys: config.snapshotMaxKeys,
    conflateMaxKeys: config.conflateMaxKeys,
    maxRateCeiling: config.maxRateCeiling,
    documentLimits: {
      maxDepth: config.maxDepth,
      maxAliases: config.maxAliases,
      maxFields: config.maxFields,
      maxDirectives: config.maxDirectives,
      maxFilterClauses: config.maxFilterClauses,
      maxFilterDepth: config.maxFilterDepth,
      maxFilterInList: config.maxFilterInList,
      allowIntrospection: config.allowIntrospection,
    },
  },
);

const port = await gateway.listen(config.port, config.host);
const url = `ws://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}${config.path}`;
// Ready means Redis answers too: until then /readyz says why, and the log says what to check, once.
if (gateway.isReady()) logger.info({ url }, 'gateway ready for clients');
else {
  logger.warn({ url, redis: redactedUrl(config.redisUrl), mode: config.redisMode }, 'gateway listening, not ready: waiting for Redis (check REDIS_URL and REDIS_MODE)');
  const waiting = setInterval(() => {
    if (!gateway.isReady()) return;
    clearInterval(waiting);
    logger.info({ url }, 'gateway ready for clients');
  }, 250);
  waiting.unref();
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  await gateway.drain();
  redis.close();
  // The last events' spans: exported before exit (bounded by the exporter's own timeout).
  await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, 'could not export the last spans'));
  logger.info('bye');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

/** REDIS_URL without its password, for logs. */
function redactedUrl(text: string): string {
  try {
    const u = new URL(text);
    if (u.password) u.password = '****';
    return u.toString();
  } catch {
    return 'an unparsable REDIS_URL';
  }
}
