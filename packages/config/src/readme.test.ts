import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { booleanFlag, csvList, defineConfigSpec, durationMs, envVar, hostPort, port, renderConfigTable, url, z } from './index.js';

// The example spec of README.md; apps test their README the same way.
const spec = defineConfigSpec({
  port: envVar({ name: 'GATEWAY_PORT', schema: port(), default: 4000, description: 'HTTP/WebSocket listen port' }),
  redisUrl: envVar({
    name: 'REDIS_URL',
    schema: url({ protocols: ['redis', 'rediss'] }),
    default: 'redis://127.0.0.1:6379',
    description: 'Redis for pub/sub and history',
  }),
  kafkaBrokers: envVar({ name: 'KAFKA_BROKERS', schema: csvList(hostPort()), description: 'Kafka bootstrap brokers' }),
  initTimeoutMs: envVar({
    name: 'CONNECTION_INIT_TIMEOUT_MS',
    schema: durationMs({ minMs: 1 }),
    default: 3_000,
    description: 'Time a socket has to send connection_init',
  }),
  jwtSecret: envVar({ name: 'JWT_SECRET', schema: z.string().min(32), secret: true, description: 'HMAC key for client JWTs' }),
  allowedOrigins: envVar({ name: 'ALLOWED_ORIGINS', schema: csvList(url()), optional: true, description: 'Browser origins allowed' }),
  history: envVar({ name: 'HISTORY_ENABLED', schema: booleanFlag(), default: true, description: 'Keep per-channel history' }),
});

describe('README.md', () => {
  it('shows the table rendered from its example spec', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(renderConfigTable(spec));
  });
});
