import { execute, type ExecutionResult } from 'graphql';
import { matchesFilter, type Envelope, type WirestreamSchema } from '@wirestream/schema';
import type { Group, HubStats } from './hub-state.js';

/**
 * A group's payload for one event: executed and serialized once for all its subscribers;
 * undefined when the group's filter does not match. Default resolvers are synchronous (a string
 * comes back); a custom async resolver still works, as a promise.
 */
export function renderPayload<C>(
  schema: WirestreamSchema,
  stats: HubStats,
  group: Group<C>,
  envelope: Envelope,
  extensions: Record<string, unknown>,
): string | Promise<string> | undefined {
  if (!matchesFilter(group.op.filter, envelope.payload)) return undefined;
  stats.executions++;
  const result = execute({
    schema: schema.schema,
    document: group.op.document,
    rootValue: { [group.op.route.fieldName]: envelope.payload },
    variableValues: group.op.variables,
    operationName: group.op.operationName,
    contextValue: group.context,
  });
  return isPromise(result) ? result.then((r) => serializeResult(r, extensions)) : serializeResult(result, extensions);
}

/** The `next` payload: data and the position, or the errors (with whatever data there is). */
function serializeResult(result: ExecutionResult, extensions: Record<string, unknown>): string {
  return JSON.stringify(result.errors ? { errors: result.errors, data: result.data } : { data: result.data, extensions });
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
