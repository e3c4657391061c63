/** An entity's representation, as federation's `_entities` takes it: its type name and key fields. */
export interface Representation {
  readonly __typename: string;
  readonly [keyField: string]: unknown;
}

/** What a source answers for each representation, in order: the entity, null (none), or why it failed. */
export type EntityResult = Readonly<Record<string, unknown>> | null | Error;

/**
 * A service entities are looked up from (a federation subgraph, a plain HTTP/JSON service): one
 * request per call, for every representation given. The gateway batches and caches around it
 * ({@link createEntityLoader}); a source only speaks its protocol.
 */
export interface EntitySource {
  /** The source's name in the SDL (`@lookup(source:)`) and in errors. */
  readonly name: string;
  /**
   * `headers` are the caller's (request-headers.ts), added to the source's own; every
   * representation of one call shares them.
   */
  fetchEntities(representations: readonly Representation[], headers?: Readonly<Record<string, string>>): Promise<readonly EntityResult[]>;
}

/** A look-up that failed: says which source and why; a retry of a later event may succeed. */
export class LookupError extends Error {
  override readonly name = 'LookupError';
  readonly retriable = true;
}
