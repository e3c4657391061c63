#!/usr/bin/env node
/**
 * The compiled `where` predicate alone (issue 16), in this process: the filters of the filters
 * scenario compiled by the gateway's own operation compiler, then called on demo payloads
 * (filters.ts, predicateMicroBench). Prints only; the filters scenario puts the same table in
 * filters.md.
 *
 *   node bench/fanout/dist/filter-predicate.js [--events 400] [--ops 1000] [--rounds 21]
 */
import { parseCli, positiveInts } from '@wirestream/bench-kit';
import { route, schema } from './engine-fixture.js';
import { predicateMicroBench } from './filters.js';
import { prepareEvents } from './publisher.js';

const { values } = parseCli({
  options: { events: { type: 'string', default: '400' }, ops: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '21' } },
});
const { events, ops, rounds } = positiveInts(values, ['events', 'ops', 'rounds']);
console.log(predicateMicroBench(schema, prepareEvents(events, route, 'ws', 50), events, ops, rounds));
