/** Renames a record field for the payload (the key style: snake_case by default): what a decoder is compiled with. */
export type FieldNamer = (name: string) => string;

/** One writer's schema compiled (Avro or Protobuf): wire-format body bytes → payload JSON text. */
export interface WireDecoder {
  /** Whether the schema is a record (a Protobuf message always is): only records can be event payloads (keys may be of any type). */
  readonly isRecord: boolean;
  /** Top-level field names of the payload, as published (after the key style); for Protobuf, those of the file's first message. */
  readonly fields: readonly string[];
  /**
   * Decodes `body` (the bytes after the 5-byte wire-format header; for Protobuf, starting with the
   * message-index list) into the payload's JSON text and the value of the payload field `routeField`
   * (as published) as a string, if it has one. Throws on bytes that do not decode with this schema.
   */
  decode(body: Buffer, routeField: string | undefined): { readonly json: string; readonly routeValue: string | undefined };
  /** The same, framed: `head` + the payload's JSON + `suffix`, as UTF-8 bytes in one buffer (the envelope). */
  decodeEnvelope(body: Buffer, head: string, suffix: string, routeField: string | undefined): { readonly bytes: Buffer; readonly routeValue: string | undefined };
  /** Decodes a key: the text of a string (or of a number), else the JSON text of the value. */
  decodeKey(body: Buffer): string;
}
