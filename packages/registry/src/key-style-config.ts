import { defineConfigSpec, envVar, z, type Config } from '@wirestream/config';
import { KEY_STYLES } from '@wirestream/transform';

/**
 * `INGEST_KEY_STYLE`: how ingest publishes payload keys (JSON keys and Avro field names). Spread
 * into ingest's spec, and into the gateway's, which needs it to compare the SDL with the registry
 * at start (sdl-check.ts): the two must agree.
 */
export const keyStyleSpec = defineConfigSpec({
  keyStyle: envVar({
    name: 'INGEST_KEY_STYLE',
    schema: z.enum(KEY_STYLES),
    default: 'snake',
    description:
      'Payload keys as published: snake (ours: listingId → listing_id, address2Line → address2_line, map keys like lst-42 kept), lodash (exactly lodash snakeCase: address_2_line, _id → id), or none (as the producer or the Avro schema wrote them). The SDL names fields accordingly; ingest and gateway must agree.',
  }),
});

export type KeyStyleConfig = Config<typeof keyStyleSpec>;
