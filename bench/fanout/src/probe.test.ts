import { describe, expect, it } from 'vitest';
import { parseMetrics, summarize } from './probe.js';
import { responsivenessOf } from './burst.js';
import { JEMALLOC, parseEnvList, parseVariants } from './variants.js';

describe('parseMetrics', () => {
  it("reads the gateway's event-loop delay quantiles in ms, the inbound queue and the pause counter", () => {
    const text = [
      '# HELP wirestream_gateway_event_loop_delay_seconds Event-loop delay since the previous scrape.',
      '# TYPE wirestream_gateway_event_loop_delay_seconds summary',
      'wirestream_gateway_event_loop_delay_seconds{quantile="0.5"} 0.0105',
      'wirestream_gateway_event_loop_delay_seconds{quantile="0.99"} 0.0421',
      'wirestream_gateway_event_loop_delay_seconds{quantile="1"} 0.25',
      'wirestream_gateway_inbound_queue_bytes 1048576',
      'wirestream_gateway_redis_paused_total 3',
      'wirestream_gateway_connections 10000',
    ].join('\n');
    expect(parseMetrics(text, 1_000)).toMatchObject({
      eldP50Ms: expect.closeTo(10.5) as number,
      eldP99Ms: expect.closeTo(42.1) as number,
      eldMaxMs: expect.closeTo(250) as number,
      inboundQueueBytes: 1_048_576,
      redisPausedTotal: 3,
      atMs: 1_000,
    });
  });

  it('leaves what a build does not expose undefined, and ignores NaN quantiles of an empty interval', () => {
    const m = parseMetrics('wirestream_gateway_connections 5\nwirestream_gateway_event_loop_delay_seconds{quantile="0.99"} NaN\n', 0);
    expect(m.eldP99Ms).toBeUndefined();
    expect(m.eldMaxMs).toBeUndefined();
    expect(m.inboundQueueBytes).toBeUndefined();
  });
});

describe('summarize', () => {
  it('counts a poll answered after the timeout as unanswered, once, and flags slow polls while the probe lagged', () => {
    const polls = [
      { sentMs: 0, doneMs: 5, ok: true },
      { sentMs: 50, doneMs: 250, ok: true },
      { sentMs: 100, doneMs: 2_150, ok: true },
      { sentMs: 150, doneMs: 160, ok: false },
    ];
    const lags = [{ atMs: 200, lagMs: 30 }];
    const s = summarize(polls, lags, 2_000, { scrapes: [], scrapesUnanswered: 0, eldExposed: false });
    expect(s.polls).toBe(4);
    expect(s.answeredMs).toEqual([5, 200]);
    expect(s.unanswered).toBe(2);
    expect(s.over100Ms).toBe(3); // 200 ms, and the two unanswered
    expect(s.suspect).toBe(3); // each of them overlaps the 30 ms lag at 200 ms
    expect(s.ownLagMaxMs).toBe(30);
  });
});

describe('responsivenessOf', () => {
  it('counts unanswered polls as slower than any answer, in the shares and the quantiles', () => {
    const x = responsivenessOf({
      polls: 4,
      answeredMs: [5, 20, 150],
      unanswered: 1,
      over100Ms: 2,
      suspect: 0,
      ownLagP99Ms: 1,
      ownLagMaxMs: 2,
      scrapes: [
        { atMs: 1_000, eldP50Ms: 10, eldP99Ms: 30, eldMaxMs: 60, inboundQueueBytes: 10, redisPausedTotal: 0 },
        { atMs: 2_000, eldP50Ms: 10, eldP99Ms: 45, eldMaxMs: 50, inboundQueueBytes: 99, redisPausedTotal: 1 },
      ],
      scrapesUnanswered: 0,
      eldExposed: true,
    });
    expect(x).toMatchObject({
      over100Share: 0.5,
      unansweredShare: 0.25,
      healthzMaxMs: Number.POSITIVE_INFINITY,
      healthzP50Ms: 20,
      eldP99Ms: 45,
      eldMaxMs: 60,
      inboundQueuePeakBytes: 99,
      redisPausedTotal: 1,
    });
  });
});

describe('env variants', () => {
  it('splits variants on ";" and entries on ",", with "default" and "jemalloc" as words', () => {
    const variants = parseVariants('default; MALLOC_ARENA_MAX=2,MALLOC_TRIM_THRESHOLD_=131072 ;jemalloc;NODE_OPTIONS=--max-semi-space-size=4');
    expect(variants.map((v) => v.env)).toEqual([
      {},
      { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' },
      { LD_PRELOAD: JEMALLOC },
      { NODE_OPTIONS: '--max-semi-space-size=4' },
    ]);
  });

  it('refuses an entry without NAME=VALUE, naming it', () => {
    expect(() => parseEnvList('MALLOC_ARENA_MAX')).toThrow(/"MALLOC_ARENA_MAX": expected NAME=VALUE/);
    expect(() => parseVariants(' ; ')).toThrow(/no variants/);
  });
});
