/** A schema that cannot serve subscriptions: the message names the field and the rule broken. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
  readonly retriable = false;
}
