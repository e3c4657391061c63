/**
 * The seller service's data: a profile per seller id the demo events use (`slr-00001` … `slr-05000`,
 * @wirestream/demo-events), derived from the id so that every process agrees without a database.
 * The event carries the seller as the listing knew it; the service answers what it knows now.
 */

/** A seller as the demo's seller service (sellers-subgraph.ts) serves it. */
export interface SellerProfile {
  readonly id: string;
  readonly display_name: string;
  /** 3.5 … 5.0, one decimal. */
  readonly rating: number;
  readonly is_verified: boolean;
  readonly listings_sold: number;
}

const NAMES = ['Anna K.', 'Bram de Vries', 'Chloé Martin', 'Dieter Müller', 'Emma Stone', 'Farid Haddad', 'Greta Lind', 'Hugo Ruiz', 'Ines Costa'];
const SELLER_ID = /^slr-(\d{1,9})$/;

/** The profile of `id`, or null for an id that is not a seller's (the subgraph then answers `null`). */
export function sellerProfile(id: string): SellerProfile | null {
  const match = SELLER_ID.exec(id);
  if (match === null) return null;
  const n = Number(match[1]);
  return {
    id,
    display_name: NAMES[n % NAMES.length] ?? 'Unknown',
    rating: (35 + ((n * 7) % 16)) / 10,
    is_verified: n % 3 !== 0,
    listings_sold: (n * 13) % 500,
  };
}

/** The subgraph's schema (Apollo Federation 2): Seller is an entity keyed by `id`. */
export const SELLERS_TYPE_DEFS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  "A seller as the seller service knows it."
  type Seller @key(fields: "id") {
    id: ID!
    display_name: String!
    "3.5 to 5.0."
    rating: Float
    is_verified: Boolean!
    listings_sold: Int!
  }
  type Query {
    seller(id: ID!): Seller
  }
`;
