#!/usr/bin/env node
// Entry point: read config, build real clients, wire, listen, drain on SIGTERM. Logic lives in gateway.ts.
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '@wirestream/config';
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { createLogger } from '@wirestream/telemetry';
import { gatewayConfigSpec } from './config.js';
import { createGateway } from './gateway.js';

function readConfig() {
  try {
    return loadConfig(gatewayConfigSpec, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

const config = readConfig();
const logger = createLogger({ name: 'gateway', level: config.logLevel });
const schema = loadWirestreamSchema(config.schemaPath ?? auctionSchemaPath);
const redis = new Redis(config.redisUrl, {
  // Subscriber connections cannot queue ordinary commands; retry forever with a capped backoff.
  maxRetriesPerRequest: null,
  retryStrategy: (times) => Math.min(times * 200, 2_000),
  connectionName: 'wirestream-gateway',
});
redis.on('ready', () => logger.info('redis ready'));
redis.on('error', (err: Error) => logger.warn({ err }, 'redis error'));

const gateway = createGateway(
  { schema, redis, logger },
  {
    path: config.path,
    channelPrefix: config.channelPrefix,
    maxPayloadBytes: config.maxPayloadBytes,
    maxBackpressureBytes: config.maxBackpressureBytes,
    idleTimeoutSeconds: config.idleTimeoutSeconds,
    connectionInitWaitTimeoutMs: config.connectionInitWaitTimeoutMs,
    maxSubscriptionsPerConnection: config.maxSubscriptionsPerConnection,
    debugEndpoints: config.debugEndpoints,
  },
);

const port = await gateway.listen(config.port, config.host);
logger.info({ url: `ws://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}${config.path}` }, 'gateway ready for clients');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  await gateway.drain();
  redis.disconnect();
  logger.info('bye');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
