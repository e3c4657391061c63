// What the benches share, once (STYLE.md habit 18).
export { startNodeProcess, waitForHttpOk, type ManagedProcess, type StartOptions } from './processes.js';
export {
  CLOCK_TICKS_PER_S,
  MiB,
  loadAverageText,
  loadAverages,
  othersCpuPct,
  readCpuMs,
  readCpuTimes,
  readCpuTimesOf,
  readMachineBusyMs,
  readMachineTicks,
  readMemAvailableMb,
  readRssAndPeak,
  readRssBytes,
  readRssSplit,
  readSchedCpuMs,
  readSchedCpuMsOf,
  readStatusBytes,
  type CpuTimes,
  type MachineTicks,
} from './proc.js';
export { fmtBytes, fmtInt, fmtMb, fmtMs } from './format.js';
export { fitLine, median, pairedRatios, quantile, rotated, spreadOf, type Spread } from './stats.js';
export { markdownTable, paddedTable } from './table.js';
export { logXLineChart, timelineChart, type LineSeries, type PhaseMark, type TimelinePanel, type TimelineSample } from './svg.js';
export { commandLine, coresText, gatewayVersion, machineText, totalMemGiB, waitForQuietMachine, type QuietWait, type QuietWaitOptions } from './header.js';
export { helpText, parseCli, positiveInt, positiveInts, type CliSpec } from './cli.js';
export { countByKey, prepareListingEvents, type ListingEvent, type ListingEventsOptions } from './listing-events.js';
export { requireGc } from './gc.js';
export { kafkaPartition, prepareCorpus, type CorpusEvent, type CorpusOptions, type EventCorpus } from './corpus.js';
export { JEMALLOC, parseEnvList } from './env-list.js';
export { createEnvelopeWriter, type EnvelopeWriter } from './envelope.js';
export { paceStream, type PaceOptions, type StreamOptions } from './pace.js';
export { BENCH_GATEWAY_ENV, getJson, startGateway, startServerProcess, type GatewayStartOptions, type ServerProcess, type ServerStartOptions } from './server.js';
export { frameLabel, readCpuProfile, type CpuProfile, type ProfileFrame } from './cpu-profile.js';
