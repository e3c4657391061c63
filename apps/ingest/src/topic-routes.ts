import { createEnvelopeHeadEncoder, type EnvelopeHeadEncoder, type WirestreamSchema } from '@wirestream/schema';

/** How the events of one topic are routed and framed, resolved once from the schema. */
export interface TopicRoute {
  /** Payload field whose value picks the shard (`@topic(key:)`); the Kafka key is the fallback. */
  readonly keyField: string | undefined;
  readonly shards: number;
  readonly encodeHead: EnvelopeHeadEncoder;
}

/** Routing per topic is fixed by the schema: resolve it once, not per message. */
export function createTopicRoutes(schema: WirestreamSchema): ReadonlyMap<string, TopicRoute> {
  return new Map(
    schema.topics.map((topic) => {
      const route = schema.routesForTopic(topic)[0];
      return [topic, { keyField: route?.keyField, shards: route?.shards ?? 1, encodeHead: createEnvelopeHeadEncoder(topic) }] as const;
    }),
  );
}
