/**
 * The envelope every bench writes, as ingest writes it: wire's head encoder for the topic, the
 * payload JSON, the closing brace. One writer per topic (the topic's JSON is encoded once).
 */
import { createEnvelopeHeadEncoder } from '@wirestream/wire';

/** `trace`: wire's `encodeEnvelopeTrace` fragment of a traced event; undefined adds nothing. */
export type EnvelopeWriter = (partition: number, offset: string, key: string, tsMs: number, payload: string, trace?: string) => string;

export function createEnvelopeWriter(topic: string): EnvelopeWriter {
  const head = createEnvelopeHeadEncoder(topic);
  return (partition, offset, key, tsMs, payload, trace) => head(partition, offset, key, tsMs, trace) + payload + '}';
}
