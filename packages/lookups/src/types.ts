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
   * representation of one call shares them. `outcome.status` is set to the HTTP status once an
   * answer arrived (for traces), left undefined when none did.
   */
  fetchEntities(representations: readonly Representation[], headers?: Readonly<Record<string, string>>, outcome?: RequestOutcome): Promise<readonly EntityResult[]>;
}

/** A look-up that failed: says which source and why; a retry of a later event may succeed. */
export class LookupError extends Error {
  override readonly name = 'LookupError';
  readonly retriable = true;
}

/** What a source reports of one request besides its results (written by the source, read after it settled). */
export interface RequestOutcome {
  status: number | undefined;
}
