// Every field of the auction schema's event types, for the projector tests.
const MONEY = '{ amount_cents currency_code }';
const BID = `{ bid_id bidder_id amount ${MONEY} placed_at is_auto_bid }`;

export const FULL_LISTING =
  'occurred_at event_id event_type listing_id listing { listing_id title description status category_path ' +
  'primary_property_id image_urls seller_info { seller_id display_name rating is_verified address { ' +
  `street_line1 address2_line city postal_code country_code } } reserve_price ${MONEY} current_price ${MONEY} recent_bids ${BID} }`;

export const FULL_BID = `event_id event_type listing_id bid_id bidder_id amount ${MONEY} placed_at is_auto_bid previous_high_bid ${BID}`;
