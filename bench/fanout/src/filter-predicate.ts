/**
 * The compiled `where` predicate alone (issue 16), in this process: the filters of the filters
 * scenario compiled by the gateway's own operation compiler, then called on demo payloads
 * (filters.ts, predicateMicroBench). The filters scenario puts the same table in filters.md.
 */
import { route, schema } from './engine-fixture.js';
import { predicateMicroBench } from './filters.js';
import { prepareEvents } from './publisher.js';
import { countOption, type MicroBench } from './scenario.js';

export const filterPredicate: MicroBench = {
  description: 'ns per evaluation of the compiled where predicates of the filters scenario (issue 16)',
  options: { events: countOption(400, 'demo payloads each predicate is called on'), ops: countOption(1_000, 'filtered operations of each arm'), rounds: countOption(21, 'rounds') },
  run(o) {
    const events = o.positiveInt('events');
    return Promise.resolve(predicateMicroBench(schema, prepareEvents(events, route, 'ws', 50), events, o.positiveInt('ops'), o.positiveInt('rounds')));
  },
};
