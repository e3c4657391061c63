import { loadCodecs, loadSchemaDirectory } from '@wirestream/registry';

/** One bid of bid-events, as the demo generator writes it (the fields the price message needs). */
export interface DemoBid {
  readonly listingId: string;
  readonly bidderId: string;
  readonly amount: { readonly amountCents: number; readonly currencyCode: string };
  readonly placedAt: string;
  readonly isAutoBid: boolean;
}

/**
 * Writes `price-events` values in Protobuf as a Confluent producer would put them on the wire: magic
 * byte 0, the schema id of the schema directory's latest `price-events-value` `.proto` (the id ingest
 * looks up), the message-index list `[0]` (one byte 0: the file's first message, `PriceChanged`), then
 * the body, encoded by protobufjs. Each bid becomes the listing's new price; the bid count is kept per listing.
 */
export async function createPriceEncoder(schemaDir: string): Promise<{ readonly id: number; readonly topic: string; encode(bid: DemoBid): Buffer }> {
  const topic = 'price-events';
  const subject = `${topic}-value`;
  const files = loadSchemaDirectory(schemaDir, 'DEMO_AVRO_SCHEMA_DIR').files.filter((f) => f.subject === subject && f.schema.schemaType === 'PROTOBUF');
  const latest = files.sort((a, b) => b.version - a.version)[0];
  if (latest === undefined) throw new Error(`DEMO_AVRO_SCHEMA_DIR ${schemaDir} has no ${subject}/v<version>.id<id>.proto: add one, or unset DEMO_AVRO_SCHEMA_DIR`);
  const { loadProtobufFile } = await loadCodecs();
  const type = loadProtobufFile(latest.schema.schema).messages[0];
  if (type === undefined) throw new Error(`${latest.path} declares no message`);
  const { id } = latest.schema;
  const header = Buffer.from([0, 0, 0, 0, 0, 0]);
  header.writeUInt32BE(id, 1);
  const bids = new Map<string, number>();
  return {
    id,
    topic,
    encode(bid) {
      const count = (bids.get(bid.listingId) ?? 0) + 1;
      bids.set(bid.listingId, count);
      const millis = Date.parse(bid.placedAt);
      const message = type.fromObject({
        listing_id: bid.listingId,
        current_price_cents: bid.amount.amountCents,
        currency_code: bid.amount.currencyCode,
        leading_bidder_id: bid.bidderId,
        bid_count: count,
        is_auto_bid: bid.isAutoBid,
        updated_at: { seconds: Math.floor(millis / 1000), nanos: (millis % 1000) * 1_000_000 },
      });
      return Buffer.concat([header, type.encode(message).finish()]);
    },
  };
}
