/**
 * An integer a double cannot hold, as decodeEnvelope keeps it: a raw JSON value holding its digits
 * (`JSON.rawJSON`, Node 21+; not in TypeScript's lib yet). The projector writes its digits, text
 * filters (IDs) compare them.
 */
export interface RawJson {
  readonly rawJSON: string;
}

const RAW = JSON as unknown as { isRawJSON(value: unknown): boolean; rawJSON(text: string): unknown };

export function isRawJson(value: unknown): value is RawJson {
  return RAW.isRawJSON(value);
}

/** The raw JSON value of `text` (valid JSON of a primitive). */
export function rawJson(text: string): RawJson {
  return RAW.rawJSON(text) as RawJson;
}
