#!/usr/bin/env node
// The demo's seller service (sellers-subgraph.ts): reads SELLERS_* settings, listens, stops on SIGTERM.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit } from '@wirestream/config';
import { createLogger } from '@wirestream/telemetry';
import { sellersConfigSpec } from './config.js';
import { createSellersSubgraph } from './sellers-subgraph.js';

const config = loadConfigOrExit(sellersConfigSpec, process.env, { file: process.env['WIRESTREAM_CONFIG_FILE'] });
const logger = createLogger({ name: 'demo-sellers', level: config.logLevel });
const { server } = createSellersSubgraph({ latencyMs: config.latencyMs });
server.listen(config.port, config.host);
try {
  await once(server, 'listening');
} catch (err) {
  logger.error(`SELLERS_PORT: cannot listen on ${config.host}:${config.port}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
const { port } = server.address() as AddressInfo;
logger.info({ port, url: `http://${config.host}:${port}/graphql`, latencyMs: config.latencyMs }, 'seller subgraph listening');

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
