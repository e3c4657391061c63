import { lodashSnakeCase } from './lodash-snake-case.js';
import { toSnakeCase } from './to-snake-case.js';

/**
 * How payload keys (JSON object keys, Avro record field names) are published (`INGEST_KEY_STYLE`):
 * - `snake` (the default): our snake_case rule, {@link toSnakeCase} (`address2Line` → `address2_line`,
 *   `_id` and map keys like `lst-000042` kept);
 * - `lodash`: exactly lodash's `snakeCase` (`address2Line` → `address_2_line`, `_id` → `id`), for
 *   pipelines migrating from a stack that published its names;
 * - `none`: keys as the producer (or the schema) wrote them.
 */
export const KEY_STYLES = Object.freeze(['snake', 'lodash', 'none'] as const);
export type KeyStyle = (typeof KEY_STYLES)[number];

const identity = (key: string): string => key;

/** The unmemoized key rule of `style`: what the transformer memoizes, the Avro decoder and the SDL tools apply. */
export function keyConverter(style: KeyStyle): (key: string) => string {
  switch (style) {
    case 'snake':
      return toSnakeCase;
    case 'lodash':
      return lodashSnakeCase;
    case 'none':
      return identity;
    default:
      throw new RangeError(`keyStyle must be one of ${KEY_STYLES.join(', ')}, got ${String(style)}`);
  }
}
