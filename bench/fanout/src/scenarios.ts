/**
 * Every scenario of the fan-out bench, in the order a run goes through them (--help lists them in
 * this order too). A new scenario is one module exporting a `Scenario` and one line here.
 */
import { bandwidthScenario } from './bandwidth.js';
import { burstScenario, heapLimitScenario, memoryReturnScenario } from './burst-sections.js';
import { fieldScenario } from './field.js';
import { filtersScenario } from './filters.js';
import { guardScenario } from './guard.js';
import { lookupsScenario } from './lookups.js';
import { pausedConflationScenario } from './paused-conflation.js';
import { saturationScenario } from './saturation.js';
import { scaleScenario } from './scale.js';
import { snapshotScenario } from './snapshot.js';
import { sseLagScenario } from './sse-lag.js';
import type { Scenario } from './scenario.js';
import { sweepScenario } from './sweep.js';
import { tracingScenario } from './tracing.js';
import { unicastScenario } from './unicast.js';

export const SCENARIOS: readonly Scenario[] = [
  scaleScenario,
  fieldScenario,
  saturationScenario,
  burstScenario,
  heapLimitScenario,
  memoryReturnScenario,
  filtersScenario,
  unicastScenario,
  lookupsScenario,
  sweepScenario,
  guardScenario,
  bandwidthScenario,
  tracingScenario,
  snapshotScenario,
  sseLagScenario,
  pausedConflationScenario,
];

/** What `--scenarios` runs when not given. */
export const DEFAULT_SCENARIOS = 'field,saturation,sweep';
