
/** A thrown value as plain JSON-safe data, for logs and protocol error payloads. */
export interface SerializedError {
  /** `err.name` (e.g. `TypeError`, `KafkaJSConnectionError`), or `NonError` for thrown non-errors. */
  type: string;
  message: string;
  stack?: string;
  /** `err.code` when it is a string or number (Node system errors, kafkajs, ioredis). */
  code?: string | number;
  /** `err.retriable` when it is a boolean (kafkajs convention; our errors follow it). */
  retriable?: boolean;
  /** `err.cause`, serialized the same way. */
  cause?: SerializedError;
  /** The errors of an `AggregateError`. */
  errors?: SerializedError[];
  /** Other own enumerable properties with primitive values (e.g. `topic`, `partition`). */
  [extra: string]: unknown;
}

// Causes can chain (or loop); logs need the first few links, not an unbounded walk.
const MAX_DEPTH = 5;
const RESERVED = new Set(['type', 'message', 'stack', 'code', 'retriable', 'cause', 'errors', 'name']);

/**
 * Converts any thrown value into plain data, once, at a boundary (a catch that logs or answers
 * a client). Keeps type, message, stack, `code`, `retriable`, the `cause` chain and primitive
 * own properties; never throws, whatever it is given.
 */
export function serializeError(err: unknown): SerializedError {
  return serialize(err, 0, new Set());
}

function serialize(value: unknown, depth: number, seen: Set<unknown>): SerializedError {
  if (!isError(value)) {
    return { type: 'NonError', message: describeValue(value) };
  }
  seen.add(value);
  const out: SerializedError = { type: value.name || 'Error', message: value.message };
  if (typeof value.stack === 'string') out.stack = value.stack;
  const record = value as unknown as Record<string, unknown>;
  const { code, retriable } = record;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (typeof retriable === 'boolean') out.retriable = retriable;
  for (const key of Object.keys(value)) {
    const extra = record[key];
    if (RESERVED.has(key)) continue;
    if (extra === null || ['string', 'number', 'boolean'].includes(typeof extra)) out[key] = extra;
  }
  if (depth < MAX_DEPTH) {
    if (value.cause !== undefined && !seen.has(value.cause)) out.cause = serialize(value.cause, depth + 1, seen);
    if (value instanceof AggregateError && Array.isArray(value.errors)) {
      out.errors = value.errors.filter((inner) => !seen.has(inner)).map((inner) => serialize(inner, depth + 1, seen));
    }
  }
  return out;
}

/**
 * Returns `err` if it is an Error, otherwise an `Error` (name `NonError`) whose message describes
 * the value and whose `cause` is the value. For `catch (error: unknown)` blocks that must hand an
 * Error on (to a callback, a promise rejection, a protocol error).
 */
export function toError(err: unknown): Error {
  if (isError(err)) return err;
  const error = new Error(describeValue(err), { cause: err });
  error.name = 'NonError';
  return error;
}

// `instanceof Error` misses errors created in another realm (vm contexts, some test runners).
// Error.isError (Node 24; util.types.isNativeError is deprecated) is not in lib ES2022's types yet.
function isError(value: unknown): value is Error {
  return value instanceof Error || (Error as ErrorConstructor & { isError(value: unknown): value is Error }).isError(value);
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string') {
    return (value as { message: string }).message;
  }
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
    return `thrown ${typeof value}: ${String(value)}`;
  }
  try {
    return `thrown ${value === null ? 'null' : typeof value}: ${JSON.stringify(value)}`;
  } catch {
    return `thrown ${typeof value}: ${Object.prototype.toString.call(value)}`;
  }
}
