import { createPrng } from './prng.js';

/** The Kafka topics the demo publishes to. */
export const DEMO_TOPICS = ['listing-events', 'bid-events'] as const;

/** One of {@link DEMO_TOPICS}. */
export type DemoTopic = (typeof DEMO_TOPICS)[number];

/** One Kafka record as the demo producer sends it: camelCase payload, keyed by listing id. */
export interface DemoEvent {
  topic: DemoTopic;
  /** The Kafka message key: the listing id (e.g. `lst-000042`), so one listing stays in one partition. */
  key: string;
  value: Record<string, unknown>;
}

export interface AuctionEventGeneratorOptions {
  /**
   * Seed of the PRNG: the same seed yields the same event sequence (ids, prices, timestamps).
   * @default 42
   */
  seed?: number;
  /**
   * Number of distinct listing ids (`lst-000000` … ). Few listings mean many events per listing.
   * @default 50
   */
  listings?: number;
  /**
   * Use the wall clock for `occurredAt`/`placedAt` (the demo producer) instead of a fixed start plus
   * pseudo-random increments (benches and tests, which need determinism).
   * @default false
   */
  realTime?: boolean;
}

export interface AuctionEventGenerator {
  /** A random event: about 70 % listing events and 30 % bid events. */
  next(): DemoEvent;
  /** A `listing-events` event for the given listing (or a random one). */
  listingEvent(listingId?: string): DemoEvent;
  /** A `bid-events` event for the given listing (or a random one); the listing's price goes up. */
  bidEvent(listingId?: string): DemoEvent;
}

type Currency = 'EUR' | 'USD' | 'GBP';

interface Money {
  amountCents: number;
  currencyCode: Currency;
}

interface Bid {
  bidId: string;
  bidderId: string;
  amount: Money;
  placedAt: string;
  isAutoBid: boolean;
}

interface ListingState {
  listingId: string;
  title: string;
  description: string;
  status: 'ACTIVE' | 'PENDING' | 'CLOSED';
  categoryPath: string[];
  primaryPropertyId: string;
  imageURLs: string[];
  seller: {
    sellerId: string;
    displayName: string;
    rating: number;
    isVerified: boolean;
    address: {
      streetLine1: string;
      address2Line: string | null;
      city: string;
      postalCode: string;
      countryCode: string;
    };
  };
  currency: Currency;
  reservePriceCents: number | null;
  currentPriceCents: number;
  /** Newest first, at most {@link RECENT_BIDS}. */
  bids: Bid[];
  /** Relisted since the last listing event, which is then a `ListingCreated`. */
  relisted: boolean;
}

/** Every listing event carries this many recent bids (the payload's bulk, as in the field). */
const RECENT_BIDS = 10;
/** Seeded timestamps start here so that runs are reproducible. */
const FIXED_START_MS = Date.UTC(2025, 0, 1, 9, 0, 0);
const DEFAULT_SEED = 42;
const DEFAULT_LISTINGS = 50;

const ADJECTIVES = ['Vintage', 'Rare', 'Restored', 'Mint', 'Antique', 'Signed', 'Limited', 'Handmade'];
// Each item with its category path, so titles and categories agree.
const ITEMS: readonly { noun: string; categoryPath: readonly string[] }[] = [
  { noun: 'Pocket Watch', categoryPath: ['Collectibles', 'Watches', 'Pocket Watches'] },
  { noun: 'Oak Sideboard', categoryPath: ['Home', 'Furniture', 'Sideboards'] },
  { noun: 'Road Bicycle', categoryPath: ['Sports', 'Cycling', 'Road Bikes'] },
  { noun: 'Film Camera', categoryPath: ['Electronics', 'Cameras', 'Film'] },
  { noun: 'Silver Coin Set', categoryPath: ['Collectibles', 'Coins', 'Europe'] },
  { noun: 'Oil Painting', categoryPath: ['Art', 'Paintings'] },
  { noun: 'Espresso Machine', categoryPath: ['Home', 'Kitchen', 'Coffee'] },
  { noun: 'Vinyl Collection', categoryPath: ['Music', 'Records'] },
];
const DESCRIPTIONS = [
  'Well kept and fully functional, with light signs of use.',
  'From a private collection; original packaging and papers included.',
  'Professionally serviced last year. Pickup or insured shipping available.',
  'Rare find in this condition. See photos for details.',
];
const SELLER_NAMES = ['Anna K.', 'Bram de Vries', 'Chloé Martin', 'Dieter Müller', 'Emma Stone', 'Farid Haddad', 'Greta Lind'];
const PLACES: readonly { streets: readonly string[]; city: string; postalCode: string; countryCode: string; currency: Currency }[] = [
  { streets: ['Prinsengracht', 'Damrak'], city: 'Amsterdam', postalCode: '1012 AB', countryCode: 'NL', currency: 'EUR' },
  { streets: ['Kaiserstraße', 'Torstraße'], city: 'Berlin', postalCode: '10115', countryCode: 'DE', currency: 'EUR' },
  { streets: ['High Street', 'Baker Street'], city: 'London', postalCode: 'EC1A 1BB', countryCode: 'GB', currency: 'GBP' },
  { streets: ['Rue de la République', 'Rue Mercière'], city: 'Lyon', postalCode: '69002', countryCode: 'FR', currency: 'EUR' },
  { streets: ['Market Street', 'Beacon Street'], city: 'Boston', postalCode: '02108', countryCode: 'US', currency: 'USD' },
];

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * Creates a deterministic generator of realistic auction events (≈2 KB JSON per listing event,
 * ≈0.4 KB per bid event). The camelCase key names are a contract: the gateway schema is written
 * against their snake_cased form.
 */
export function createAuctionEventGenerator(options: AuctionEventGeneratorOptions = {}): AuctionEventGenerator {
  const {
    seed = DEFAULT_SEED,
    listings = DEFAULT_LISTINGS,
    realTime = false,
  } = options;
  if (!Number.isInteger(listings) || listings < 1 || listings > 999_999) {
    throw new RangeError(`listings must be an integer in 1..999999 (ids are lst-000000…lst-999999), got ${String(listings)}`);
  }

  const random = createPrng(seed);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number): boolean => random() < p;

  let clockMs = FIXED_START_MS;
  const now = (): string => {
    if (realTime) return new Date().toISOString();
    clockMs += int(20, 900);
    return new Date(clockMs).toISOString();
  };

  let eventSeq = 0;
  let bidSeq = 0;
  const nextEventId = (): string => `evt-${pad(seed >>> 0, 10)}-${pad(++eventSeq, 9)}`;
  const nextBidId = (): string => `bid-${pad(++bidSeq, 9)}`;
  const bidderId = (): string => `usr-${pad(int(1, 20_000), 6)}`;

  const states = new Map<string, ListingState>();

  function increment(cents: number): number {
    // Bid steps grow with the price, as on real auction sites (roughly 1–5 %, at least 1.00).
    return Math.max(100, Math.round((cents * int(1, 5)) / 100 / 50) * 50);
  }

  function createState(listingId: string): ListingState {
    const place = pick(PLACES);
    const item = pick(ITEMS);
    const startCents = int(20, 2_000) * 100;
    const state: ListingState = {
      listingId,
      title: `${pick(ADJECTIVES)} ${item.noun}`,
      description: chance(0.5) ? pick(DESCRIPTIONS) : `${pick(DESCRIPTIONS)} ${pick(DESCRIPTIONS)}`,
      status: chance(0.9) ? 'ACTIVE' : 'PENDING',
      categoryPath: [...item.categoryPath],
      primaryPropertyId: `prp-${pad(int(1, 999_999), 6)}`,
      imageURLs: Array.from({ length: int(2, 3) }, (_, i) => `https://img.wirestream.example/${listingId}/${i + 1}.jpg`),
      seller: {
        sellerId: `slr-${pad(int(1, 5_000), 5)}`,
        displayName: pick(SELLER_NAMES),
        rating: int(35, 50) / 10,
        isVerified: chance(0.7),
        address: {
          streetLine1: `${int(1, 250)} ${pick(place.streets)}`,
          address2Line: chance(0.3) ? `Apt ${int(1, 40)}` : null,
          city: place.city,
          postalCode: place.postalCode,
          countryCode: place.countryCode,
        },
      },
      currency: place.currency,
      reservePriceCents: chance(0.6) ? startCents * int(2, 4) : null,
      currentPriceCents: startCents,
      bids: [],
      relisted: false,
    };
    // Seed a rolling window of earlier bids so every listing event carries RECENT_BIDS of them.
    for (let i = 0; i < RECENT_BIDS; i++) placeBid(state);
    return state;
  }

  function stateOf(listingId: string | undefined): ListingState {
    const id = listingId ?? `lst-${pad(int(0, listings - 1), 6)}`;
    let state = states.get(id);
    if (state === undefined) {
      state = createState(id);
      states.set(id, state);
    }
    return state;
  }

  function money(state: ListingState, amountCents: number): Money {
    return { amountCents, currencyCode: state.currency };
  }

  function placeBid(state: ListingState): Bid {
    state.currentPriceCents += increment(state.currentPriceCents);
    const bid: Bid = {
      bidId: nextBidId(),
      bidderId: bidderId(),
      amount: money(state, state.currentPriceCents),
      placedAt: now(),
      isAutoBid: chance(0.35),
    };
    state.bids.unshift(bid);
    if (state.bids.length > RECENT_BIDS) state.bids.length = RECENT_BIDS;
    return bid;
  }

  // Fresh objects per event: consumers (the transform) may mutate what they receive.
  const copyBid = (bid: Bid): Bid => ({ ...bid, amount: { ...bid.amount } });

  /** A closed listing comes back as a new auction round at a fresh start price. */
  function relist(state: ListingState): void {
    state.status = 'ACTIVE';
    state.relisted = true;
    state.currentPriceCents = int(20, 2_000) * 100;
    // A new round starts without bids: the window refills as bids arrive (so a few listing events
    // after a relist carry fewer than RECENT_BIDS bids, as they would in production).
    state.bids = [];
  }

  function listingEvent(listingId?: string): DemoEvent {
    const state = stateOf(listingId);
    const roll = random();
    let eventType: 'ListingCreated' | 'ListingUpdated' | 'PriceChanged' | 'ListingClosed';
    if (state.status === 'CLOSED' || state.relisted) {
      eventType = 'ListingCreated';
      if (state.status === 'CLOSED') relist(state);
      state.relisted = false;
    } else if (roll < 0.05) {
      eventType = 'ListingClosed';
      state.status = 'CLOSED';
    } else if (roll < 0.5) {
      eventType = 'PriceChanged';
      placeBid(state);
    } else {
      eventType = 'ListingUpdated';
      if (state.status === 'PENDING' && chance(0.5)) state.status = 'ACTIVE';
    }
    const { seller } = state;
    return {
      topic: 'listing-events',
      key: state.listingId,
      value: {
        eventId: nextEventId(),
        eventType,
        listingId: state.listingId,
        occurredAt: now(),
        listing: {
          listingId: state.listingId,
          title: state.title,
          description: state.description,
          status: state.status,
          categoryPath: [...state.categoryPath],
          primaryPropertyId: state.primaryPropertyId,
          imageURLs: [...state.imageURLs],
          sellerInfo: {
            sellerId: seller.sellerId,
            displayName: seller.displayName,
            rating: seller.rating,
            isVerified: seller.isVerified,
            address: { ...seller.address },
          },
          reservePrice: state.reservePriceCents === null ? null : money(state, state.reservePriceCents),
          currentPrice: money(state, state.currentPriceCents),
          recentBids: state.bids.map(copyBid),
        },
      },
    };
  }

  function bidEvent(listingId?: string): DemoEvent {
    const state = stateOf(listingId);
    // Nobody bids on a closed listing: a bid means it was relisted, and the first bid of a new
    // round has no previous high bid.
    let previous = state.bids[0];
    if (state.status === 'CLOSED') {
      relist(state);
      previous = undefined;
    }
    const bid = placeBid(state);
    return {
      topic: 'bid-events',
      key: state.listingId,
      value: {
        eventId: nextEventId(),
        eventType: 'BidPlaced',
        listingId: state.listingId,
        bidId: bid.bidId,
        bidderId: bid.bidderId,
        amount: { ...bid.amount },
        placedAt: bid.placedAt,
        isAutoBid: bid.isAutoBid,
        previousHighBid: previous === undefined ? null : copyBid(previous),
      },
    };
  }

  return {
    next: () => (random() < 0.7 ? listingEvent() : bidEvent()),
    listingEvent,
    bidEvent,
  };
}
