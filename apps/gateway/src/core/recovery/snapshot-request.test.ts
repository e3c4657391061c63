import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auctionSchemaPath, createWirestreamSchema } from '@wirestream/schema';
import { createOperationCompiler, type CompiledSubscription } from '../operations/operations.js';
import { parseSnapshotRequest, resolveSnapshotAsk } from './snapshot-request.js';

// The example schema with listing-events kept as a snapshot (bid-events not).
const sdl = readFileSync(auctionSchemaPath, 'utf8')
  .replace('keyFormat: TopicKeyFormat = STRING)', 'keyFormat: TopicKeyFormat = STRING, snapshot: Boolean = false)')
  .replace('@topic(name: "listing-events", key: "listing_id")', '@topic(name: "listing-events", key: "listing_id", snapshot: true)');
const compiler = createOperationCompiler(createWirestreamSchema(sdl));
const LIMITS = { maxKeys: 3, available: true };

function operation(query: string, variables?: Record<string, unknown>): CompiledSubscription {
  const result = compiler.compile({ query, variables });
  if (!result.ok || result.operation.kind !== 'subscription') throw new Error(`expected a subscription: ${JSON.stringify(result)}`);
  return result.operation;
}

describe('extensions.snapshot', () => {
  it('is true, or absent (false and null too); anything else names the field', () => {
    expect(parseSnapshotRequest({ snapshot: true })).toBe(true);
    for (const absent of [undefined, null, {}, { snapshot: false }, { snapshot: null }]) expect(parseSnapshotRequest(absent)).toBe(false);
    for (const bad of ['yes', 1, { keys: ['a'] }, []]) {
      expect(parseSnapshotRequest({ snapshot: bad })).toMatch(/^extensions\.snapshot must be true .* or absent, got /);
    }
  });

  it('reads the key argument, else the keys a where pins, else the whole topic up to the cap', () => {
    const ask = (query: string) => resolveSnapshotAsk({ snapshot: true }, operation(query), LIMITS);
    expect(ask('subscription { listingUpdated(listing_id: "lst-1") { event_id } }')).toEqual({ keys: ['lst-1'], cap: 3 });
    expect(ask('subscription { listingUpdated(where: { listing_id: { eq: "lst-2" } }) { event_id } }')).toEqual({ keys: ['lst-2'], cap: 3 });
    expect(ask('subscription { listingUpdated(where: { listing_id: { in: ["a", "b"] } }) { event_id } }')).toEqual({ keys: ['a', 'b'], cap: 3 });
    expect(ask('subscription { listingUpdated(event_type: "BidPlaced") { event_id } }')).toEqual({ keys: 'all', cap: 3 });
    expect(ask('subscription { listingUpdated(where: { listing_id: { ne: "a" } }) { event_id } }')).toEqual({ keys: 'all', cap: 3 });
  });

  it('refuses more keys than GATEWAY_SNAPSHOT_MAX_KEYS, a topic without a snapshot, and a gateway without a reader', () => {
    const many = operation('subscription { listingUpdated(where: { listing_id: { in: ["a", "b", "c", "d"] } }) { event_id } }');
    expect(resolveSnapshotAsk({ snapshot: true }, many, LIMITS)).toBe(
      'extensions.snapshot: the subscription names 4 keys, over the limit of 3 (GATEWAY_SNAPSHOT_MAX_KEYS); ask for fewer keys.',
    );
    const bids = operation('subscription { bidPlaced { bid_id } }');
    expect(resolveSnapshotAsk({ snapshot: true }, bids, LIMITS)).toBe(
      'extensions.snapshot: bidPlaced reads topic "bid-events", which keeps no snapshot; declare the field with @topic(snapshot: true) (and restart ingest) to serve its current values.',
    );
    expect(resolveSnapshotAsk({}, bids, LIMITS)).toBeUndefined();
    const listings = operation('subscription { listingUpdated { event_id } }');
    expect(resolveSnapshotAsk({ snapshot: true }, listings, { maxKeys: 3, available: false })).toMatch(/this gateway reads no snapshots \(GATEWAY_HISTORY=false/);
    expect(resolveSnapshotAsk({ snapshot: 'all' }, listings, LIMITS)).toMatch(/^extensions\.snapshot must be true/);
  });
});
