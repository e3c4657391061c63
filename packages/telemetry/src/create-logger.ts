import { pino, type DestinationStream, type Logger } from 'pino';
import { serializeError } from './errors.js';
import { activeTraceFields, mergeTraceFields } from './tracing.js';

/** Log levels, most severe first; `silent` turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Paths redacted from every log line (value replaced by `[Redacted]`). pino paths match exact
 * positions: `*.password` is `password` one level down, so deeper values are NOT covered — log
 * the object that holds a secret at the top level or one level down, or pass extra `redact`
 * paths. Each wildcard path costs a little on every log call, which is why the list stays short.
 *
 * - `password`, `token`, `accessToken`, `refreshToken`, `secret`, `apiKey`, `jwt`, `cookie`,
 *   `authorization` — at the top level and one level down (`*.password`…)
 * - `headers.authorization`, `headers.cookie` — also one level down (`req.headers.authorization`)
 * - `connectionParams.*` — every value of the graphql-ws `connection_init` payload (it carries
 *   the JWT), at the top level and one level down
 */
export const DEFAULT_REDACT_PATHS: readonly string[] = Object.freeze([
  ...['password', 'token', 'accessToken', 'refreshToken', 'secret', 'apiKey', 'jwt', 'cookie', 'authorization'].flatMap(
    (key) => [key, `*.${key}`],
  ),
  'headers.authorization',
  '*.headers.authorization',
  'headers.cookie',
  '*.headers.cookie',
  'connectionParams.*',
  '*.connectionParams.*',
]);

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** Service name, written as `service` on every line (e.g. `gateway`). */
  name: string;
  /**
   * Lowest level written.
   * @default 'info'
   */
  level?: LogLevel;
  /**
   * Where lines go. Tests pass `createMemorySink()`.
   * @default standard output through pino's default sonic-boom stream: asynchronous (a slow log
   *   reader does not block the event loop), flushed on normal exit; lines still buffered when
   *   the process is killed or runs out of heap are lost
   */
  destination?: DestinationStream;
  /**
   * Extra paths to redact, added to {@link DEFAULT_REDACT_PATHS}.
   * @default []
   */
  redact?: readonly string[];
}

/**
 * Creates the service's root logger: JSON lines with `level` as a label, an ISO `time`,
 * `service`, `trace_id`/`span_id` while a span is active, and secret-looking paths redacted. `err`/`error` fields go through
 * `serializeError`, so any thrown value can be logged as `logger.error({ err }, 'msg')`.
 *
 * Bind per-connection or per-component fields once with `logger.child({ ... })`, never per event.
 */
export function createLogger({ name, level = 'info', destination, redact = [] }: CreateLoggerOptions): Logger {
  if (name.trim() === '') throw new TypeError('createLogger: name must be a non-empty service name');
  const options: pino.LoggerOptions = {
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    // A label ("warn") instead of pino's number (40): log stores and people read it directly.
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: [...DEFAULT_REDACT_PATHS, ...redact], censor: '[Redacted]' },
    serializers: { err: serializeError, error: serializeError },
    // trace_id / span_id of the active span (tracing.ts), so log lines and traces join; without
    // tracing no span is ever active and this returns one shared empty object.
    mixin: activeTraceFields,
    mixinMergeStrategy: mergeTraceFields,
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
