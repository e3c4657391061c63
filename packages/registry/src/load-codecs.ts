/** The decoders of codecs.ts: Avro (avsc) and Protobuf (protobufjs) schemas compiled, .proto files read. */
export type Codecs = typeof import('./codecs.js');

/**
 * Loads avsc and protobufjs with the decoders that use them, once (the module cache keeps them).
 * Ingest's schema decoders and the start-up check import them themselves with the first schema of
 * their type; this is for other callers (the demo's encoder, tools). Importing the package's index
 * cost 31.1 MiB of RSS with them, 23.0 without (bench/results/idle-rss.md, decision 0031).
 */
export function loadCodecs(): Promise<Codecs> {
  return import('./codecs.js');
}
