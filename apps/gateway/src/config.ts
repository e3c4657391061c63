import { booleanFlag, defineConfigSpec, envVar, integer, port, url, z } from '@wirestream/config';
import { LOG_LEVELS } from '@wirestream/telemetry';

/** Every setting of the gateway, read once from the environment by `main.ts`. */
export const gatewayConfigSpec = defineConfigSpec({
  host: envVar({ name: 'GATEWAY_HOST', schema: z.string().trim().min(1), default: '0.0.0.0', description: 'Address the HTTP/WebSocket server binds.' }),
  port: envVar({ name: 'GATEWAY_PORT', schema: port(), default: 4000, description: 'HTTP/WebSocket port (0 picks a free one).' }),
  path: envVar({ name: 'GATEWAY_PATH', schema: z.string().trim().startsWith('/'), default: '/graphql', description: 'WebSocket endpoint path (graphql-transport-ws).' }),
  redisUrl: envVar({ name: 'REDIS_URL', schema: url({ protocols: ['redis', 'rediss'] }), default: 'redis://127.0.0.1:6379', description: 'Redis the gateway subscribes to.', secret: false }),
  channelPrefix: envVar({ name: 'REDIS_CHANNEL_PREFIX', schema: z.string().trim().regex(/^[A-Za-z0-9_.-]+$/), default: 'ws', description: 'Prefix of Redis channels; must match ingest.' }),
  schemaPath: envVar({ name: 'SCHEMA_PATH', schema: z.string().trim().min(1), optional: true, description: 'GraphQL SDL with @topic bindings (default: the example auction schema).' }),
  maxPayloadBytes: envVar({ name: 'GATEWAY_MAX_PAYLOAD_BYTES', schema: integer({ min: 1_024, max: 16_777_216 }), default: 65_536, description: 'Largest WebSocket frame accepted; larger closes the socket.' }),
  maxBackpressureBytes: envVar({ name: 'GATEWAY_MAX_BACKPRESSURE_BYTES', schema: integer({ min: 16_384, max: 268_435_456 }), default: 1_048_576, description: 'Bytes queued for one slow socket before it is closed.' }),
  idleTimeoutSeconds: envVar({ name: 'GATEWAY_IDLE_TIMEOUT_SECONDS', schema: integer({ min: 0, max: 960 }), default: 60, description: 'Silence before the server pings, then closes a dead socket (0 disables).' }),
  connectionInitWaitTimeoutMs: envVar({ name: 'GATEWAY_CONNECTION_INIT_TIMEOUT_MS', schema: integer({ min: 100, max: 600_000 }), default: 3_000, description: 'Time a socket has to send connection_init (else closed with 4408).' }),
  maxSubscriptionsPerConnection: envVar({ name: 'GATEWAY_MAX_SUBSCRIPTIONS_PER_CONNECTION', schema: integer({ min: 1, max: 100_000 }), default: 100, description: 'Concurrent subscriptions one socket may hold.' }),
  debugEndpoints: envVar({ name: 'GATEWAY_DEBUG_ENDPOINTS', schema: booleanFlag(), default: false, description: 'Serve GET /debug/memory (for benchmarks; keep off in production).' }),
  logLevel: envVar({ name: 'LOG_LEVEL', schema: z.enum(LOG_LEVELS), default: 'info', description: 'Lowest log level written (pino).' }),
});
