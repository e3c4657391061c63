import { execute, type ExecutionResult } from 'graphql';
import { matchesFilter, type WirestreamSchema } from '@wirestream/schema';
import type { Envelope } from '@wirestream/wire';
import type { GatewayPlugin } from '@wirestream/plugin';
import type { Logger } from '@wirestream/telemetry';
import type { CompiledSubscription } from '../operations/operations.js';
import { rawJsonFieldResolver } from '../operations/raw-json.js';
import type { HubStats } from './stats.js';
import { createByteProjector, NO_MATCH, projectBytes, type ByteProjector } from '../operations/byte-projector.js';

/**
 * What renders payloads for one hub: the schema, the executions counter, and the last event's
 * extensions with their JSON (every group of one event gets the same object, so it is serialized
 * once per event, not once per group). One per hub: two hubs in a process share nothing.
 */
export interface Renderer {
  readonly schema: WirestreamSchema;
  readonly stats: HubStats;
  lastExtensions: Record<string, unknown> | undefined;
  lastTail: string;
  /** A plugin's onEvent (GATEWAY_PLUGIN): keep, drop or rewrite each event before any group renders it. */
  readonly onEvent: EventHook | undefined;
  readonly logger: Logger | undefined;
  /** The last envelope the hook saw and what it made of it (null: dropped): every group of one event shares one call. */
  hookedIn: Envelope | undefined;
  hookedOut: Envelope | null;
  /**
   * The WebAssembly projector (decision 0043): renders from an envelope's text what a byte plan
   * covers. Undefined with a plugin's onEvent (it reads every payload as an object anyway).
   */
  readonly bytes: ByteProjector | undefined;
}

export type EventHook = NonNullable<GatewayPlugin['onEvent']>;

/** What a payload is rendered for: a group's operation and its resolver context. */
export interface RenderTarget {
  readonly op: CompiledSubscription;
  readonly context: object | undefined;
}

export function createRenderer(schema: WirestreamSchema, stats: HubStats, plugin: { readonly onEvent: EventHook; readonly logger: Logger } | undefined = undefined): Renderer {
  const bytes = plugin === undefined ? createByteProjector() : undefined;
  return { schema, stats, lastExtensions: undefined, lastTail: '}', onEvent: plugin?.onEvent, logger: plugin?.logger, hookedIn: undefined, hookedOut: null, bytes };
}

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
export function renderPayload(renderer: Renderer, group: RenderTarget, event: Envelope, extensions: Record<string, unknown>): string | Promise<string> | undefined {
  const { op } = group;
  const envelope = renderer.onEvent === undefined || event.deleted === true ? event : hookedEnvelope(renderer, event);
  if (envelope === null) return undefined;
  // From the envelope's text where the operation's byte plan covers this event (the module declines the rest).
  const bytePlan = op.projector?.bytes;
  if (bytePlan !== undefined && renderer.bytes !== undefined && op.where === undefined && envelope.deleted !== true) {
    const json = projectBytes(renderer.bytes, envelope, bytePlan, op.filter, extensionsTail(renderer, extensions));
    if (json === NO_MATCH) return undefined;
    if (json !== undefined) {
      renderer.stats.executions++;
      renderer.stats.byteRenders++;
      return json;
    }
  }
  if (!matchesFilter(op.filter, envelope.payload)) return undefined;
  if (op.where !== undefined && !op.where(envelope)) return undefined;
  if (envelope.deleted === true) return deletedPayload(envelope, extensions);
  renderer.stats.executions++;
  if (op.projector !== undefined) {
    // JSON.stringify({ data, extensions }) of execute's result, written as one flat string.
    const json = op.projector.project(envelope.payload, '{"data":', extensionsTail(renderer, extensions));
    if (json !== undefined) return json;
  }
  const result = execute({
    schema: renderer.schema.schema,
    document: op.document,
    rootValue: { [op.route.fieldName]: envelope.payload },
    variableValues: op.variables,
    operationName: op.operationName,
    contextValue: group.context,
    fieldResolver: rawJsonFieldResolver,
  });
  return isPromise(result) ? result.then((r) => serializeResult(r, extensions)) : serializeResult(result, extensions);
}

/**
 * The event as the plugin's onEvent leaves it: the same envelope, null (dropped) or one with the
 * hook's payload. One call per event however many groups render it (the last envelope is
 * remembered; the fan-out hands every group the same object). A throw drops the event: a hook that
 * redacts must not leak the original when it fails.
 */
function hookedEnvelope(renderer: Renderer, envelope: Envelope): Envelope | null {
  if (renderer.hookedIn === envelope) return renderer.hookedOut;
  const hook = renderer.onEvent as EventHook;
  let out: Envelope | null;
  try {
    const { topic, partition, offset, key, ts, payload } = envelope;
    const decision = hook({ topic, partition, offset, key: key ?? undefined, timestamp: ts, payload });
    out = decision === undefined ? envelope : decision === null ? null : { ...envelope, payload: decision };
  } catch (err) {
    renderer.logger?.error({ err, topic: envelope.topic, partition: envelope.partition, offset: envelope.offset }, 'the gateway plugin onEvent threw; the event was dropped');
    out = null;
  }
  renderer.hookedIn = envelope;
  renderer.hookedOut = out;
  return out;
}

/** `,"extensions":…}` of this event, serialized by its first group only. */
function extensionsTail(renderer: Renderer, extensions: Record<string, unknown>): string {
  if (extensions !== renderer.lastExtensions) {
    const json = JSON.stringify(extensions) as string | undefined;
    renderer.lastTail = json === undefined ? '}' : ',"extensions":' + json + '}';
    renderer.lastExtensions = extensions;
  }
  return renderer.lastTail;
}

/**
 * The `next` payload: the data (whatever there is, with the field errors when a field failed) and always the
 * event's extensions: a frame with errors still carries its position, so a client's resume point moves past it
 * (graphql-ws and the SSE cursor read it from there).
 */
function serializeResult(result: ExecutionResult, extensions: Record<string, unknown>): string {
  return JSON.stringify(result.errors ? { errors: result.errors, data: result.data, extensions } : { data: result.data, extensions });
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** The data-less payload of a deleted event: its key and its position, on every transport. */
function deletedPayload(envelope: Envelope, extensions: Record<string, unknown>): string {
  return JSON.stringify({ extensions: { deleted: { key: envelope.key }, ...extensions } });
}
