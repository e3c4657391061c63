#!/usr/bin/env node
/**
 * Point the load client at a running gateway by hand:
 *   wirestream-loadgen --url ws://127.0.0.1:4000/graphql --sockets 2000 --mix shared:90,filtered:10 --seconds 30
 *   wirestream-loadgen --urls ws://127.0.0.1:4001/graphql,ws://127.0.0.1:4002/graphql --sockets 30000
 * Prints counters every second. Without a publisher of its own it cannot know what was expected,
 * so it reports deliveries, duplicates and latency (of events whose occurred_at is a recent time),
 * not loss: the fan-out bench does that.
 */
import { parseCli } from '@wirestream/bench-kit';
import { createBenchClock } from './clock.js';
import { createLoadgen } from './loadgen.js';
import { parseMix } from './operations.js';

const { values } = parseCli({
  options: {
    url: { type: 'string', default: 'ws://127.0.0.1:4000/graphql' },
    urls: { type: 'string' },
    sockets: { type: 'string', default: '1000' },
    mix: { type: 'string', default: 'shared:90,filtered:10' },
    distinct: { type: 'string' },
    workers: { type: 'string' },
    seconds: { type: 'string', default: '30' },
    listings: { type: 'string', default: '50' },
  },
});

const listings = Number(values.listings);
const filterKeys = Array.from({ length: listings }, (_, i) => `lst-${String(i).padStart(6, '0')}`);
const plan =
  values.distinct !== undefined
    ? { distinctOperations: Number(values.distinct), filterKeys }
    : { mix: parseMix(values.mix), filterKeys };
const clock = createBenchClock();
const loadgen = createLoadgen({
  ...(values.urls === undefined ? { url: values.url } : { urls: values.urls.split(',') }),
  sockets: Number(values.sockets),
  plan,
  // Real offsets are large: track a window of 2^20 positions starting at 0.
  maxEvents: 1 << 20,
  clockOffsetUs: clock.offsetUs,
  ...(values.workers === undefined ? {} : { workers: Number(values.workers) }),
});

const stopAt = Date.now() + Number(values.seconds) * 1_000;
const timer = setInterval(() => {
  const p = loadgen.progress();
  console.log(
    `subscribed ${p.subscribed}/${p.sockets} failed ${p.failed} closed ${p.closedByServer} ` +
      `frames ${p.frames} duplicates ${p.duplicates} errors ${p.protocolErrors}`,
  );
}, 1_000);
try {
  await loadgen.settled(60_000);
  while (Date.now() < stopAt) await new Promise((r) => setTimeout(r, 200));
  const report = await loadgen.report({ total: 0, perFilterKey: [] });
  console.log(
    JSON.stringify({ ...report, lost: undefined, expected: undefined, latencyMs: { ...report.latencyMs, max: report.latencyMs.max } }, null, 2),
  );
} finally {
  clearInterval(timer);
  await loadgen.stop();
}
