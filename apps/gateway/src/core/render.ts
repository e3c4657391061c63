import { execute, type ExecutionResult } from 'graphql';
import { matchesFilter, type Envelope, type WirestreamSchema } from '@wirestream/schema';
import type { Group, HubStats } from './hub-state.js';

/**
 * A group's payload for one event: rendered and serialized once for all its subscribers;
 * undefined when the group's filter does not match. The operation's projector writes the JSON
 * directly when it can (projector.ts: byte-identical to `execute`); otherwise graphql-js executes
 * it. Default resolvers are synchronous (a string comes back); a custom async resolver still
 * works, as a promise. `extensions` is serialized once per event: pass one object per event to
 * every group, and do not change it afterwards.
 *
 * A deleted event (a snapshot topic's tombstone, decision 0023) is matched like an event whose
 * payload has only its key (key filters match it, filters on other fields do not: a deletion cannot
 * be shown to belong to a caller bound to another field) and is not executed: it is the data-less
 * `{"extensions":{"deleted":{"key":…},"position":…}}` (decision 0024).
 */
export function renderPayload<C>(
  schema: WirestreamSchema,
  stats: HubStats,
  group: Group<C>,
  envelope: Envelope,
  extensions: Record<string, unknown>,
): string | Promise<string> | undefined {
  const { op } = group;
  if (!matchesFilter(op.filter, envelope.payload)) return undefined;
  if (op.where !== undefined && !op.where(envelope)) return undefined;
  if (envelope.deleted === true) return deletedPayload(envelope, extensions);
  stats.executions++;
  if (op.projector !== undefined) {
    // JSON.stringify({ data, extensions }) of execute's result, written as one flat string.
    const json = op.projector.project(envelope.payload, '{"data":', extensionsTail(extensions));
    if (json !== undefined) return json;
  }
  const result = execute({
    schema: schema.schema,
    document: op.document,
    rootValue: { [op.route.fieldName]: envelope.payload },
    variableValues: op.variables,
    operationName: op.operationName,
    contextValue: group.context,
  });
  return isPromise(result) ? result.then((r) => serializeResult(r, extensions)) : serializeResult(result, extensions);
}

// The last event's extensions and their JSON: every group of one event gets the same object, so
// it is serialized once per event, not once per group.
let lastExtensions: Record<string, unknown> | undefined;
let lastTail = '}';

function extensionsTail(extensions: Record<string, unknown>): string {
  if (extensions !== lastExtensions) {
    const json = JSON.stringify(extensions) as string | undefined;
    lastTail = json === undefined ? '}' : ',"extensions":' + json + '}';
    lastExtensions = extensions;
  }
  return lastTail;
}

/** The `next` payload: data and the position, or the errors (with whatever data there is). */
function serializeResult(result: ExecutionResult, extensions: Record<string, unknown>): string {
  return JSON.stringify(result.errors ? { errors: result.errors, data: result.data } : { data: result.data, extensions });
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** The data-less payload of a deleted event: its key and its position, on every transport. */
function deletedPayload(envelope: Envelope, extensions: Record<string, unknown>): string {
  return JSON.stringify({ extensions: { deleted: { key: envelope.key }, ...extensions } });
}
