import { z } from 'zod';

// Schemas for the forms environment variables commonly take. Each one parses the raw string
// strictly (digits only for numbers: `z.coerce.number()` would accept '1e3', '0x50' and ' ')
// and carries a `.describe()` text naming the expected form, which ConfigError shows when the
// variable is missing and which every issue repeats when a value is wrong.

const DIGITS = /^\d+$/;
const SIGNED_DIGITS = /^-?\d+$/;

function integerString(expected: string, min: number, max: number, pattern: RegExp) {
  return z
    .string()
    .trim()
    .regex(pattern, { error: `expected ${expected}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { error: `expected ${expected}` })
        .max(max, { error: `expected ${expected}` }),
    )
    .describe(expected);
}

/** Options of {@link integer}. */
export interface IntegerOptions {
  /** @default Number.MIN_SAFE_INTEGER */
  min?: number;
  /** @default Number.MAX_SAFE_INTEGER */
  max?: number;
}

/** A decimal integer within `[min, max]`, e.g. `MAX_SUBSCRIPTIONS_PER_CONNECTION=100`. */
export function integer({ min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER }: IntegerOptions = {}) {
  const range =
    min === Number.MIN_SAFE_INTEGER && max === Number.MAX_SAFE_INTEGER
      ? ''
      : max === Number.MAX_SAFE_INTEGER
        ? ` >= ${min}`
        : ` between ${min} and ${max}`;
  return integerString(`an integer${range}`, min, max, min >= 0 ? DIGITS : SIGNED_DIGITS);
}

/** A TCP port, 0–65535 (0 lets the OS pick a free one, which tests use). */
export function port() {
  return integerString('a port number (integer 0-65535)', 0, 65_535, DIGITS);
}

/** Options of {@link durationMs}. */
export interface DurationMsOptions {
  /** @default 0 */
  minMs?: number;
  /** @default Number.MAX_SAFE_INTEGER */
  maxMs?: number;
}

/**
 * A duration in whole milliseconds, e.g. `CONNECTION_INIT_TIMEOUT_MS=3000`. Name such variables
 * with a `_MS` suffix so the unit is never a guess.
 */
export function durationMs({ minMs = 0, maxMs = Number.MAX_SAFE_INTEGER }: DurationMsOptions = {}) {
  const range = maxMs === Number.MAX_SAFE_INTEGER ? ` >= ${minMs}` : ` between ${minMs} and ${maxMs}`;
  return integerString(`a duration in milliseconds (integer${range})`, minMs, maxMs, DIGITS);
}

/**
 * A boolean written as `true`/`false`/`1`/`0` (any case). Anything else is an error rather than
 * a guess: `z.coerce.boolean()` turns the string 'false' into `true`.
 */
export function booleanFlag() {
  const expected = 'a boolean (true, false, 1 or 0)';
  return z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['true', 'false', '1', '0'], { error: `expected ${expected}` }))
    .transform((value) => value === 'true' || value === '1')
    .describe(expected);
}

/** Options of {@link url}. */
export interface UrlOptions {
  /**
   * Accepted schemes without the colon, e.g. `['redis', 'rediss']`. Empty accepts any.
   * @default []
   */
  protocols?: readonly string[];
}

/** An absolute URL, e.g. `REDIS_URL=redis://127.0.0.1:6379`. Kept as a string. */
export function url({ protocols = [] }: UrlOptions = {}) {
  const expected =
    protocols.length === 0 ? 'an absolute URL' : `a URL with scheme ${protocols.map((p) => `${p}:`).join(' or ')}`;
  const schema =
    protocols.length === 0
      ? z.url({ error: `expected ${expected}` })
      : z.url({
          protocol: new RegExp(`^(?:${protocols.map(escapeRegExp).join('|')})$`),
          error: `expected ${expected}`,
        });
  return z.string().trim().pipe(schema).describe(expected);
}

/** `host:port`, e.g. one Kafka broker `kafka-0.kafka:9092` (IPv6 in brackets: `[::1]:9092`). */
export function hostPort() {
  const expected = 'host:port (e.g. 127.0.0.1:9092)';
  return z
    .string()
    .trim()
    .refine(
      (value) => {
        const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value);
        return match !== null && Number(match[2]) <= 65_535;
      },
      { error: `expected ${expected}` },
    )
    .describe(expected);
}

/** Options of {@link csvList}. */
export interface CsvListOptions {
  /**
   * Fewest entries accepted. A list that is set but empty is almost always a mistake.
   * @default 1
   */
  minItems?: number;
}

/**
 * A comma-separated list, each entry trimmed and parsed by `item`; empty entries are dropped.
 * E.g. `KAFKA_BROKERS=kafka-0:9092, kafka-1:9092` with `csvList(hostPort())`.
 */
export function csvList<I extends z.ZodType<unknown, string>>(item: I, { minItems = 1 }: CsvListOptions = {}) {
  const expected = `a comma-separated list of ${item.description ?? 'values'}${minItems > 1 ? ` (at least ${minItems})` : ''}`;
  return z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    )
    .pipe(z.array(item).min(minItems, { error: `expected ${expected}` }))
    .describe(expected);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
