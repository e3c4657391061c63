#!/usr/bin/env node
/**
 * The compiled `where` predicate alone (issue 16), in this process: the filters of the filters
 * scenario compiled by the gateway's own operation compiler, then called on demo payloads
 * (filters.ts, predicateMicroBench). Prints only; the filters scenario puts the same table in
 * filters.md.
 *
 *   node bench/fanout/dist/filter-predicate.js [--events 400] [--ops 1000] [--rounds 21]
 */
import { auctionSchemaPath, loadWirestreamSchema } from '@wirestream/schema';
import { parseCli, positiveInt } from '@wirestream/bench-kit';
import { predicateMicroBench } from './filters.js';
import { prepareEvents } from './publisher.js';

const { values } = parseCli({
  options: { events: { type: 'string', default: '400' }, ops: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '21' } },
});
const events = positiveInt('events', values.events);
const schema = loadWirestreamSchema(auctionSchemaPath);
const route = schema.routes.get('listingUpdated');
if (!route) throw new Error('the auction schema has no listingUpdated route');
console.log(predicateMicroBench(schema, prepareEvents(events, route, 'ws', 50), events, positiveInt('ops', values.ops), positiveInt('rounds', values.rounds)));
