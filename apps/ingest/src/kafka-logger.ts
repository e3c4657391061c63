import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '@wirestream/telemetry';

/** Routes kafkajs's own logs into our pino logger, under `component: "kafkajs"`. */
export function kafkaLogCreator(logger: Logger): logCreator {
  const child = logger.child({ component: 'kafkajs' });
  return () => ({ level, log }) => {
    const { message, ...extra } = log;
    if (level === logLevel.ERROR) child.error(extra, message);
    else if (level === logLevel.WARN) child.warn(extra, message);
    else if (level === logLevel.INFO) child.debug(extra, message); // kafkajs INFO is per-rebalance chatter
    else child.trace(extra, message);
  };
}
