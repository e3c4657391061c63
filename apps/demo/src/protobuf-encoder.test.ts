import { fileURLToPath } from 'node:url';
import { createAuctionEventGenerator } from '@wirestream/demo-events';
import { createSchemaDecoders, loadSchemaDirectory, readWireHeader } from '@wirestream/registry';
import { describe, expect, it } from 'vitest';
import { createPriceEncoder, type DemoBid } from './protobuf-encoder.js';

const SCHEMAS = fileURLToPath(new URL('../schemas', import.meta.url));

describe('the demo’s price-events encoder (Protobuf, Confluent wire format)', () => {
  it('writes each bid as a PriceChanged that ingest’s decoder reads back from the schema directory, the bid count per listing', async () => {
    const encoder = await createPriceEncoder(SCHEMAS);
    const directory = loadSchemaDirectory(SCHEMAS);
    const decoders = createSchemaDecoders({ source: directory, fieldName: (name) => name /* the .proto's names are snake_case already */ });
    await decoders.load([encoder.id]);
    const entry = decoders.entry(encoder.id);
    if (entry?.kind !== 'decoder') throw new Error(`not a decoder: ${JSON.stringify(entry)}`);
    const generator = createAuctionEventGenerator({ seed: 11 });
    const counts = new Map<string, number>();
    let bids = 0;
    while (bids < 100) {
      const event = generator.next();
      if (event.topic !== 'bid-events') continue;
      bids++;
      const bid = event.value as unknown as DemoBid;
      const bytes = encoder.encode(bid);
      expect(readWireHeader(bytes)).toMatchObject({ ok: true, id: encoder.id });
      const { json, routeValue } = entry.decoder.decode(bytes.subarray(5), 'listing_id');
      counts.set(bid.listingId, (counts.get(bid.listingId) ?? 0) + 1);
      expect(routeValue).toBe(bid.listingId);
      expect(JSON.parse(json)).toEqual({
        listing_id: bid.listingId,
        current_price_cents: String(bid.amount.amountCents),
        currency_code: bid.amount.currencyCode,
        leading_bidder_id: bid.bidderId,
        bid_count: counts.get(bid.listingId),
        is_auto_bid: bid.isAutoBid,
        updated_at: new Date(Date.parse(bid.placedAt)).toISOString().replace('.000Z', 'Z'),
      });
    }
    expect(Math.max(...counts.values())).toBeGreaterThan(1);
  });
});
