import { randomBytes } from 'node:crypto';

let counter = 0;

/**
 * A name no other test (in this run or an earlier one against the same broker) uses:
 * `<prefix>-<time base36>-<counter>-<random hex>`, e.g. `orders-m3k2x1a0-1-9f3c2a`.
 *
 * Safe as a Kafka topic or group id and as a Redis key or channel: characters outside
 * `[A-Za-z0-9._-]` in `prefix` become `-`, and the result stays far below Kafka's 249-char limit.
 */
export function uniqueName(prefix: string): string {
  const clean = prefix.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 120) || 'test';
  counter += 1;
  return `${clean}-${Date.now().toString(36)}-${counter}-${randomBytes(3).toString('hex')}`;
}
