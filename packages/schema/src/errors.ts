/** One thing wrong with a schema, placed in the SDL so whoever wrote it can go and fix it. */
export interface SchemaProblem {
  /** 1-based line in the SDL, when the problem has a place. */
  readonly line: number | undefined;
  /** 1-based column in the SDL, when the problem has a place. */
  readonly column: number | undefined;
  /** The schema coordinate it is about (`Subscription.listingUpdated`, `@topic`), when there is one. */
  readonly coordinate: string | undefined;
  /** What is wrong and what to write instead. */
  readonly message: string;
}

/**
 * A schema that cannot serve subscriptions, or a schema file that cannot be read. The message lists
 * every problem, each with its place in the SDL and the rule broken; `problems` holds them one by one.
 * Never retriable: the SDL (or the path to it) must change.
 */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
  readonly retriable = false;
  readonly problems: readonly SchemaProblem[];

  constructor(message: string, problems: readonly SchemaProblem[] = []) {
    super(message);
    this.problems = Object.freeze([...problems]);
  }
}
