import { createRequire } from 'node:module';
import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '@wirestream/telemetry';

/**
 * The messages of the Kafka protocol errors kafkajs retries itself (its `errorCodes`, `retriable:
 * true`: a leader election under way, a topic not yet on every broker, a coordinator moving).
 * kafkajs logs each failed response at ERROR before it retries; one that keeps failing reaches our
 * code as the caller's error, and is logged there. Read from kafkajs itself (pinned), not copied.
 */
const RETRIABLE_PROTOCOL_ERRORS: ReadonlySet<string> = (() => {
  try {
    const { errorCodes } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { errorCodes?: unknown };
    if (!Array.isArray(errorCodes)) return new Set<string>();
    return new Set(
      errorCodes.flatMap((e: unknown) => {
        const { retriable, message } = (e ?? {}) as { retriable?: unknown; message?: unknown };
        return retriable === true && typeof message === 'string' ? [message] : [];
      }),
    );
  } catch {
    return new Set<string>(); // another kafkajs layout: every error stays an error
  }
})();

/** kafkajs's `Response <api>(key, version)` line for a protocol error it will retry. */
function isRetriedResponse(message: string, extra: Readonly<Record<string, unknown>>): boolean {
  return message.startsWith('Response ') && typeof extra['error'] === 'string' && RETRIABLE_PROTOCOL_ERRORS.has(extra['error']);
}

/**
 * Routes kafkajs's own logs into our pino logger, under `component: "kafkajs"`. A failed response
 * kafkajs retries (a protocol error it marks retriable) is debug, not error: it is not a fault of
 * ours or the operator's, and the retry's outcome is what matters (logged where it surfaces).
 */
export function kafkaLogCreator(logger: Logger): logCreator {
  const child = logger.child({ component: 'kafkajs' });
  return () => ({ level, log }) => {
    const { message, ...extra } = log;
    if (level === logLevel.ERROR) {
      if (isRetriedResponse(message, extra)) child.debug({ ...extra, retried: true }, message);
      else child.error(extra, message);
    } else if (level === logLevel.WARN) child.warn(extra, message);
    else if (level === logLevel.INFO) child.debug(extra, message); // kafkajs INFO is per-rebalance chatter
    else child.trace(extra, message);
  };
}
