/**
 * What a `GATEWAY_PLUGIN` module may export, for plugin authors: types only (and
 * {@link definePlugin}, which checks them at compile time). Every export is optional.
 */
import type { IResolvers } from '@graphql-tools/utils';
import type { LazyFactories } from '@wirestream/context';

/** What every operation group's context offers before any lazy member is built. */
export interface OperationGroupInfo {
  /** The group's identity: document, operation name, variables and the caller's scope key. */
  readonly dedupKey: string;
  /** The subscription field, and the Kafka topic it reads. */
  readonly fieldName: string;
  readonly topic: string;
}

/**
 * Backends a resolver reads from its `context`, built per operation group on first property access
 * and disposed (`dispose()`, `close()`, `end()` or `destroy()`) when the group's last subscriber
 * leaves (`@wirestream/context`): never per connection, never per event.
 */
export type PluginContext = LazyFactories<object, OperationGroupInfo>;

/** Resolvers in graphql-tools' shape (`{ Type: { field: resolve } }`), merged onto the SDL's types. */
export type PluginResolvers = IResolvers;

/** Who subscribes, as the gateway decided at `connection_init`. */
export interface PluginPrincipal {
  readonly scopes: ReadonlySet<string>;
  /** The tenant claim's value (`GATEWAY_JWT_TENANT_CLAIM`), when configured and present. */
  readonly tenant?: string | undefined;
  /** The verified token's claims; empty for an anonymous connection. */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** What `onSubscribe` is told: the field the operation subscribes to, its variables, its caller. */
export interface SubscribeHookInput {
  readonly fieldName: string;
  readonly topic: string;
  readonly operationName: string | undefined;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly principal: PluginPrincipal;
  /** `graphql-transport-ws`, `graphql-ws` (legacy) or `graphql-sse`. */
  readonly transport: string;
}

/** A GraphQL error as the client receives it. */
export interface PluginError {
  readonly message: string;
  readonly extensions?: Readonly<Record<string, unknown>>;
}

/**
 * `onSubscribe`'s answer: nothing (or `true`) allows; `{ errors }` refuses with them (the client
 * gets a GraphQL error, the socket stays); `{ variables }` replaces the variables (e.g. narrows a
 * filter to what the caller may see) and the operation is compiled and checked again with them.
 */
export type SubscribeDecision = undefined | void | true | { readonly errors: readonly PluginError[] } | { readonly variables: Readonly<Record<string, unknown>> };

/** One event, once, before it is rendered for any operation (live, replayed or from a snapshot). */
export interface EventHookInput {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | undefined;
  /** Kafka timestamp, ms since the epoch. */
  readonly timestamp: number;
  /**
   * The snake_cased payload as ingest published it: read it, do not change it (return a new one). An
   * integer a double cannot hold (past 2^53, e.g. an int64) is a `JSON.rawJSON` value whose `rawJSON`
   * is its digits: pass it on as it is to keep every digit (docs/schema.md, `Long`).
   */
  readonly payload: Readonly<Record<string, unknown>>;
}

/**
 * `onEvent`'s answer: nothing keeps the event; `null` drops it (no operation sees it; its position
 * is still passed, so resumes go on after it); an object is the payload every operation sees instead.
 */
export type EventDecision = undefined | void | null | Readonly<Record<string, unknown>>;

/** The exports of a `GATEWAY_PLUGIN` module (named exports, or one default export object). */
export interface GatewayPlugin {
  readonly resolvers?: PluginResolvers;
  readonly context?: PluginContext;
  /**
   * Called once per subscribe, after the operation compiled and passed the caller's scopes. It may
   * answer at once or return a promise (e.g. after asking an entitlement service): meanwhile the
   * subscription holds the events that arrive for it and sends them, in order, once allowed; a
   * client that completes or disconnects meanwhile leaves nothing behind. A throw (or a rejection)
   * refuses the subscription with a generic error (logged), unless it is an error with `extensions`
   * (a GraphQLError): then its message is sent.
   */
  readonly onSubscribe?: (input: SubscribeHookInput) => SubscribeDecision | PromiseLike<SubscribeDecision>;
  /**
   * Called synchronously once per event before its fan-out: keep, drop or rewrite. A throw drops
   * the event (logged): a rewrite that redacts must not leak the original when it fails.
   */
  readonly onEvent?: (event: EventHookInput) => EventDecision;
}

/** Types a plugin's exports: `export default definePlugin({ onEvent: … })`. */
export function definePlugin<P extends GatewayPlugin>(plugin: P): P {
  return plugin;
}
