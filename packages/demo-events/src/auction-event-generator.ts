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
 * Everything one generator owns. The functions below each do one step and read or advance it.
 *
 * Determinism trap: every pseudo-random value is drawn from `random`, so the ORDER of the draws is
 * part of the output (the same seed must give byte-identical events; tests and benches rely on it).
 * Object literals below are evaluated top to bottom, so reordering their keys, or hoisting a draw
 * out of one, changes every event that follows.
 */
interface GeneratorState {
  readonly seed: number;
  readonly listings: number;
  readonly realTime: boolean;
  /** The seeded PRNG (mulberry32), the only source of randomness. */
  readonly random: () => number;
  /** The simulated clock when not `realTime`: advanced by each timestamp drawn. */
  clockMs: number;
  eventSeq: number;
  bidSeq: number;
  /** Listings met so far, by id; created on first use. */
  readonly listingStates: Map<string, ListingState>;
}

type ListingEventType = 'ListingCreated' | 'ListingUpdated' | 'PriceChanged' | 'ListingClosed';

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
  const gen: GeneratorState = {
    seed,
    listings,
    realTime,
    random: createPrng(seed),
    clockMs: FIXED_START_MS,
    eventSeq: 0,
    bidSeq: 0,
    listingStates: new Map(),
  };
  return {
    next: () => nextEvent(gen),
    listingEvent: (listingId) => listingEvent(gen, listingId),
    bidEvent: (listingId) => bidEvent(gen, listingId),
  };
}

// --- random draws -------------------------------------------------------------------------------

function int(gen: GeneratorState, min: number, max: number): number {
  return min + Math.floor(gen.random() * (max - min + 1));
}

function pick<T>(gen: GeneratorState, items: readonly T[]): T {
  return items[Math.floor(gen.random() * items.length)] as T;
}

function chance(gen: GeneratorState, p: number): boolean {
  return gen.random() < p;
}

/** A timestamp: the wall clock, or the simulated clock moved forward by 20–900 ms (one draw). */
function now(gen: GeneratorState): string {
  if (gen.realTime) return new Date().toISOString();
  gen.clockMs += int(gen, 20, 900);
  return new Date(gen.clockMs).toISOString();
}

// --- ids ----------------------------------------------------------------------------------------

function nextEventId(gen: GeneratorState): string {
  return `evt-${pad(gen.seed >>> 0, 10)}-${pad(++gen.eventSeq, 9)}`;
}

function nextBidId(gen: GeneratorState): string {
  return `bid-${pad(++gen.bidSeq, 9)}`;
}

function randomBidderId(gen: GeneratorState): string {
  return `usr-${pad(int(gen, 1, 20_000), 6)}`;
}

// --- listing state ------------------------------------------------------------------------------

/** The listing's state, created (with its draws) the first time an id is seen; no id: a random one. */
function listingStateOf(gen: GeneratorState, listingId: string | undefined): ListingState {
  const id = listingId ?? `lst-${pad(int(gen, 0, gen.listings - 1), 6)}`;
  let state = gen.listingStates.get(id);
  if (state === undefined) {
    state = createListingState(gen, id);
    gen.listingStates.set(id, state);
  }
  return state;
}

function createListingState(gen: GeneratorState, listingId: string): ListingState {
  const place = pick(gen, PLACES);
  const item = pick(gen, ITEMS);
  const startCents = int(gen, 20, 2_000) * 100;
  const state: ListingState = {
    listingId,
    title: `${pick(gen, ADJECTIVES)} ${item.noun}`,
    description: chance(gen, 0.5) ? pick(gen, DESCRIPTIONS) : `${pick(gen, DESCRIPTIONS)} ${pick(gen, DESCRIPTIONS)}`,
    status: chance(gen, 0.9) ? 'ACTIVE' : 'PENDING',
    categoryPath: [...item.categoryPath],
    primaryPropertyId: `prp-${pad(int(gen, 1, 999_999), 6)}`,
    imageURLs: Array.from({ length: int(gen, 2, 3) }, (_, i) => `https://img.wirestream.example/${listingId}/${i + 1}.jpg`),
    seller: {
      sellerId: `slr-${pad(int(gen, 1, 5_000), 5)}`,
      displayName: pick(gen, SELLER_NAMES),
      rating: int(gen, 35, 50) / 10,
      isVerified: chance(gen, 0.7),
      address: {
        streetLine1: `${int(gen, 1, 250)} ${pick(gen, place.streets)}`,
        address2Line: chance(gen, 0.3) ? `Apt ${int(gen, 1, 40)}` : null,
        city: place.city,
        postalCode: place.postalCode,
        countryCode: place.countryCode,
      },
    },
    currency: place.currency,
    reservePriceCents: chance(gen, 0.6) ? startCents * int(gen, 2, 4) : null,
    currentPriceCents: startCents,
    bids: [],
    relisted: false,
  };
  // Seed a rolling window of earlier bids so every listing event carries RECENT_BIDS of them.
  for (let i = 0; i < RECENT_BIDS; i++) placeBid(gen, state);
  return state;
}

function increment(gen: GeneratorState, cents: number): number {
  // Bid steps grow with the price, as on real auction sites (roughly 1–5 %, at least 1.00).
  return Math.max(100, Math.round((cents * int(gen, 1, 5)) / 100 / 50) * 50);
}

function placeBid(gen: GeneratorState, state: ListingState): Bid {
  state.currentPriceCents += increment(gen, state.currentPriceCents);
  const bid: Bid = {
    bidId: nextBidId(gen),
    bidderId: randomBidderId(gen),
    amount: money(state, state.currentPriceCents),
    placedAt: now(gen),
    isAutoBid: chance(gen, 0.35),
  };
  state.bids.unshift(bid);
  if (state.bids.length > RECENT_BIDS) state.bids.length = RECENT_BIDS;
  return bid;
}

/** A closed listing comes back as a new auction round at a fresh start price. */
function relist(gen: GeneratorState, state: ListingState): void {
  state.status = 'ACTIVE';
  state.relisted = true;
  state.currentPriceCents = int(gen, 20, 2_000) * 100;
  // A new round starts without bids: the window refills as bids arrive (so a few listing events
  // after a relist carry fewer than RECENT_BIDS bids, as they would in production).
  state.bids = [];
}

/**
 * Moves the listing one step (close, raise the price, update, or relist after a close) and says
 * which event that was.
 */
function advanceListing(gen: GeneratorState, state: ListingState): ListingEventType {
  // Drawn even when the outcome is forced (a relisted listing), to keep the draw order.
  const roll = gen.random();
  if (state.status === 'CLOSED' || state.relisted) {
    if (state.status === 'CLOSED') relist(gen, state);
    state.relisted = false;
    return 'ListingCreated';
  }
  if (roll < 0.05) {
    state.status = 'CLOSED';
    return 'ListingClosed';
  }
  if (roll < 0.5) {
    placeBid(gen, state);
    return 'PriceChanged';
  }
  if (state.status === 'PENDING' && chance(gen, 0.5)) state.status = 'ACTIVE';
  return 'ListingUpdated';
}

// --- events -------------------------------------------------------------------------------------

function nextEvent(gen: GeneratorState): DemoEvent {
  return gen.random() < 0.7 ? listingEvent(gen) : bidEvent(gen);
}

function listingEvent(gen: GeneratorState, listingId?: string): DemoEvent {
  const state = listingStateOf(gen, listingId);
  const eventType = advanceListing(gen, state);
  const { seller } = state;
  return {
    topic: 'listing-events',
    key: state.listingId,
    value: {
      eventId: nextEventId(gen),
      eventType,
      listingId: state.listingId,
      occurredAt: now(gen),
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

function bidEvent(gen: GeneratorState, listingId?: string): DemoEvent {
  const state = listingStateOf(gen, listingId);
  // Nobody bids on a closed listing: a bid means it was relisted, and the first bid of a new
  // round has no previous high bid.
  let previous = state.bids[0];
  if (state.status === 'CLOSED') {
    relist(gen, state);
    previous = undefined;
  }
  const bid = placeBid(gen, state);
  return {
    topic: 'bid-events',
    key: state.listingId,
    value: {
      eventId: nextEventId(gen),
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

function money(state: ListingState, amountCents: number): Money {
  return { amountCents, currencyCode: state.currency };
}

// Fresh objects per event: consumers (the transform) may mutate what they receive.
function copyBid(bid: Bid): Bid {
  return { ...bid, amount: { ...bid.amount } };
}
